package thin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// BackoffFile is the back-off record in $OMNI_HOME: while it stands, hook
// clients fail open at once instead of waiting on a daemon that just took
// a request's whole deadline or refused its token.
const BackoffFile = "daemon.backoff"

// BackoffFor is how long a back-off stands unless a daemon that becomes
// ready ends it first (EndBackoff): long enough for a replacement to stop
// the suspect and start (a kill, the lock, a store recovery after an
// unclean exit), short enough that a failed replacement costs one hook
// deadline per 10 s rather than one per call.
const BackoffFor = 10 * time.Second

// ErrBackoff: a recent call found the daemon unhealthy (a deadline, a
// refused token) and a replacement is under way; the request was not sent.
var ErrBackoff = errors.New("daemon back-off: a recent call failed, a replacement is under way")

// ErrUnhealthy: the daemon at the address is ours (it proved its
// certificate, or the connection never got that far) but took the whole
// deadline or refused the token. The caller starts a back-off (StartBackoff)
// and a replacement.
var ErrUnhealthy = errors.New("the daemon did not answer in time or refused the token")

// ReplaceEnv, set to 1 in the environment of `omni daemon`, makes the new
// daemon first judge the one daemon.addr names and stop it when it is
// hung or refuses its token (the replacement a back-off waits for).
const ReplaceEnv = "OMNI_DAEMON_REPLACE"

// ErrTokenRefused: the daemon proved its certificate but refused the
// token of the address file (with ErrUnhealthy).
var ErrTokenRefused = errors.New("token refused")

// Backoff is the content of BackoffFile (JSON).
type Backoff struct {
	// Until is when the back-off ends (Unix milliseconds).
	Until int64 `json:"until_ms"`
	// PID is the daemon the failing call talked to (Addr.PID), 0 if none
	// was named: the suspect a replacement may stop.
	PID int `json:"pid"`
	// Why is the failure, for omni doctor and the log.
	Why string `json:"why"`
	// Hard: hooks fail open at once while it stands. A back-off is hard
	// when the daemon refused the token or its process is stopped
	// (SIGSTOP; Stopped); a timeout of a daemon that still runs may be a
	// loaded machine, so that back-off only keeps a second replacement
	// from starting while the first judges the daemon, and hooks keep
	// calling.
	Hard bool `json:"hard"`
}

// ReadBackoff returns home's back-off record and whether it still stands.
func ReadBackoff(home string) (Backoff, bool) {
	var b Backoff
	data, err := os.ReadFile(filepath.Join(home, BackoffFile))
	if err != nil || json.Unmarshal(data, &b) != nil {
		return Backoff{}, false
	}
	return b, time.Now().UnixMilli() < b.Until
}

// StartBackoff records a back-off of BackoffFor against the daemon pid
// (0 when unknown) after err, hard when err is ErrTokenRefused or the
// process is stopped (Backoff.Hard), and reports whether this caller
// started it: only that caller starts a replacement. A back-off that
// still stands is left as it is (false); an expired one is replaced.
func StartBackoff(home string, pid int, err error) bool {
	why := err.Error()
	hard := errors.Is(err, ErrTokenRefused) || Stopped(pid)
	path := filepath.Join(home, BackoffFile)
	if _, on := ReadBackoff(home); on {
		return false
	}
	_ = os.Remove(path) // expired or unreadable
	b, _ := json.Marshal(Backoff{Until: time.Now().Add(BackoffFor).UnixMilli(), PID: pid, Why: why, Hard: hard})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false // another caller started it first
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(path)
		return false
	}
	return true
}

// Stopped reports whether process pid is stopped (SIGSTOP, or traced):
// state T or t in /proc/<pid>/stat. False when it cannot tell (no such
// process, not Linux).
func Stopped(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't')
}

// EndBackoff removes home's back-off record (a daemon became ready).
func EndBackoff(home string) { _ = os.Remove(filepath.Join(home, BackoffFile)) }

// BackoffError is ErrBackoff with the recorded reason.
func BackoffError(b Backoff) error {
	return fmt.Errorf("%w (%s; until %s)", ErrBackoff, b.Why, time.UnixMilli(b.Until).Format(time.TimeOnly))
}
