package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ClusterDownFile is the file in the home that says the cluster could not
// be reached when a daemon (or a command in-process) last tried to open the
// log on it, and until when requests fail at once instead of trying again.
const ClusterDownFile = "cluster.down"

const (
	// downFirst and downMax bound the back-off a failed open on a cluster
	// sets: 5 s after the first failure, doubling up to 60 s, so a cluster
	// that is gone costs one attempt (a hook's wait) per back-off, not one
	// per call.
	downFirst = 5 * time.Second
	downMax   = 60 * time.Second
)

// clusterDown is the content of ClusterDownFile.
type clusterDown struct {
	Until   time.Time     `json:"until"`
	Backoff time.Duration `json:"backoff"`
	Error   string        `json:"error"`
}

func clusterDownPath(home string) string { return filepath.Join(home, ClusterDownFile) }

// markClusterDown records that opening the log on the cluster failed with
// err: requests fail at once (ErrClusterDown) for a back-off that doubles
// with each failure in a row after the previous back-off passed (5 s to
// 60 s).
func markClusterDown(home string, err error) {
	d := clusterDown{Backoff: downFirst, Error: err.Error()}
	if prev, ok := readClusterDown(home); ok {
		d.Backoff = min(max(2*prev.Backoff, downFirst), downMax)
		if time.Now().Before(prev.Until) {
			// Another attempt inside the same back-off (a racing process):
			// one failure, not two in a row.
			d.Backoff = prev.Backoff
		}
	}
	d.Until = time.Now().Add(d.Backoff)
	if b, jerr := json.Marshal(d); jerr == nil {
		_ = writeFileAtomic(clusterDownPath(home), b)
	}
}

// clearClusterDown removes the mark once the cluster answered.
func clearClusterDown(home string) {
	if err := os.Remove(clusterDownPath(home)); err != nil && !errors.Is(err, os.ErrNotExist) {
		Logf(home)("remove %s: %v", clusterDownPath(home), err)
	}
}

func readClusterDown(home string) (clusterDown, bool) {
	var d clusterDown
	b, err := os.ReadFile(clusterDownPath(home))
	if err != nil || json.Unmarshal(b, &d) != nil {
		return d, false
	}
	return d, true
}

// ClusterDown returns ErrClusterDown (wrapped, with the failure and the
// time left) while home's mark says the cluster could not be reached and
// its back-off has not passed; nil otherwise.
func ClusterDown(home string) error {
	d, ok := readClusterDown(home)
	if !ok {
		return nil
	}
	if wait := time.Until(d.Until); wait > 0 {
		return fmt.Errorf("%w: %s (next try in %s)", ErrClusterDown, d.Error, wait.Round(time.Second))
	}
	return nil
}
