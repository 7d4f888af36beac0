package daemon

// Retention: the daemon removes the batches older than the ledger's window
// (projections/ledger.Window, 30 days: a line delivered longer ago can no
// longer be claimed, so the fold no longer needs those batches), at most
// once a day, through the same path as omni gc --before (Service.gcBefore:
// the base snapshot first, the blocks that newer markers still name
// archived again with a Pruned event, then the removal).

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/omnictx/omni/internal/daemon/wire/thin"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/projections/ledger"
)

// EnvRetention names the environment variable that sets how long the
// daemon keeps batches: a Go duration (2160h) or days (90d); 0 keeps
// everything. Unset or empty: DefaultRetention.
const EnvRetention = "OMNI_RETENTION"

// DefaultRetention is the ledger's window (ledger.Window, 30 days), the
// age past which a batch no longer takes part in any fold.
const DefaultRetention = ledger.Window

// MethodStore is the "store" method: the store's size, retained range and
// retention (StoreInfo).
const MethodStore = "store"

// retainEvery is the least time between two retention passes of a home
// (the time of the last one is kept in store/retention.json, so a daemon
// that restarts does not run it again).
const retainEvery = 24 * time.Hour

// retainFirst and retainCheck are when a daemon first looks whether a
// retention pass is due (after start, so the first hooks do not share the
// CPU with it) and how often it looks again. Variables for tests.
var (
	retainFirst = time.Minute
	retainCheck = time.Hour
)

// Retention is a home's retention setting.
type Retention struct {
	// Keep is how long batches are kept; 0 keeps everything.
	Keep time.Duration `json:"keep"`
	// Setting is the setting as the user wrote it ("" for the default).
	Setting string `json:"setting,omitempty"`
	// Err is why Setting could not be read; nothing is removed then.
	Err string `json:"error,omitempty"`
}

// String describes the setting for people, naming the variable:
// "30d (the default; OMNI_RETENTION sets it, 0 keeps everything)".
func (r Retention) String() string {
	switch {
	case r.Err != "":
		return fmt.Sprintf("none: %s", r.Err)
	case r.Setting == "":
		return fmt.Sprintf("%s (the default; %s sets it, 0 keeps everything)", FormatAge(r.Keep), EnvRetention)
	case r.Keep == 0:
		return fmt.Sprintf("everything is kept (%s=%s)", EnvRetention, r.Setting)
	}
	return fmt.Sprintf("%s (%s=%s; 0 keeps everything)", FormatAge(r.Keep), EnvRetention, r.Setting)
}

// RetentionOf reads EnvRetention through lookup (os.LookupEnv). A value
// that does not parse keeps everything and says why in Err.
func RetentionOf(lookup func(string) (string, bool)) Retention {
	v, _ := lookup(EnvRetention)
	v = strings.TrimSpace(v)
	if v == "" {
		return Retention{Keep: DefaultRetention}
	}
	if v == "0" {
		return Retention{Setting: v}
	}
	d, err := ParseAge(v)
	if err != nil {
		return Retention{Setting: v, Err: fmt.Sprintf("%s=%s: %v; nothing is removed until it is fixed", EnvRetention, v, err)}
	}
	return Retention{Keep: d, Setting: v}
}

// WithRetention returns cfg with its Retention read from lookup
// (RetentionOf).
func WithRetention(cfg Config, lookup func(string) (string, bool)) Config {
	cfg.Retention = RetentionOf(lookup)
	return cfg
}

// ParseAge reads a positive Go duration (2160h) or a number of days (90d).
func ParseAge(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		if days <= 0 || days > int64(math.MaxInt64/int64(24*time.Hour)) {
			return 0, fmt.Errorf("%q: want 1d to 106751d", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a duration (2160h) nor days (90d)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: must be positive", s)
	}
	return d, nil
}

// FormatAge prints d in days when it is whole days ("30d"), else as a Go
// duration.
func FormatAge(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// RetainRecord is one retention pass, kept in store/retention.json.
type RetainRecord struct {
	// At is when it ran; Cutoff the age limit it applied (At minus the
	// retention).
	At     time.Time `json:"at"`
	Cutoff time.Time `json:"cutoff"`
	// Removed batches First..Before-1 (Removed is 0 when none was old
	// enough); Kept blocks archived again above Before.
	First   events.Seq `json:"first,omitempty"`
	Before  events.Seq `json:"before,omitempty"`
	Removed int        `json:"removed"`
	Kept    int        `json:"kept,omitempty"`
	// Err is why the pass failed (nothing was removed unless Removed says
	// so).
	Err string `json:"error,omitempty"`
}

func retainPath(home string) string { return filepath.Join(home, "store", "retention.json") }

// readRetainRecord returns the home's last retention pass (nil: none).
func readRetainRecord(home string) *RetainRecord {
	b, err := os.ReadFile(retainPath(home))
	if err != nil {
		return nil
	}
	var r RetainRecord
	if json.Unmarshal(b, &r) != nil || r.At.IsZero() {
		return nil
	}
	return &r
}

// Retain runs a retention pass at now when one is due: the retention keeps
// something less than everything and is readable, the log is this home's
// own (never a cluster's shared stream), no process marked the store busy
// (omni bench; omni forget and bench also hold the store lock, so no
// daemon runs beside them), and the last pass is a day old or more. It
// removes the batches older than now minus the retention through the path
// of omni gc --before and records the pass. ran is false when none was
// due. Errors: gc's (the pass is recorded all the same, so a failing one
// is not retried before a day has passed).
func (s *Service) Retain(ctx context.Context, now time.Time) (rec RetainRecord, ran bool, err error) {
	r := s.retention
	if r.Keep <= 0 || r.Err != "" || s.home == "" {
		return rec, false, nil
	}
	if st, ok := s.log.(*jetstream.Store); ok && st.Remote() {
		return rec, false, nil
	}
	if _, err := os.Lstat(filepath.Join(s.home, thin.FrozenFile)); err == nil {
		return rec, false, nil // a bench's frozen stream: its times are the corpus's
	}
	if _, busy := StoreBusy(s.home); busy {
		return rec, false, nil
	}
	if last := readRetainRecord(s.home); last != nil && !now.Before(last.At) && now.Sub(last.At) < retainEvery {
		return *last, false, nil
	}
	plan, err := s.gcBefore(ctx, now.Add(-r.Keep), false, "retention")
	if ctx.Err() != nil {
		return rec, false, ctx.Err() // interrupted (the daemon stops): try again at the next start
	}
	rec = RetainRecord{At: now.UTC(), Cutoff: now.Add(-r.Keep).UTC(), First: plan.First, Before: plan.Before, Removed: plan.Removed, Kept: plan.Kept}
	if err != nil {
		rec.Err = err.Error()
		Logf(s.home)("retention: %v", err)
	}
	if b, merr := json.Marshal(rec); merr == nil {
		if werr := writeFileAtomic(retainPath(s.home), b); werr != nil && err == nil {
			err = fmt.Errorf("retention: record the pass: %w", werr)
		}
	}
	return rec, true, err
}

// startRetention runs svc's retention passes in the background (first
// after retainFirst, then every retainCheck; Retain decides whether one is
// due) and returns the func that stops them and waits.
func startRetention(svc *Service) func() {
	if svc.retention.Keep <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(retainFirst)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, _, _ = svc.Retain(ctx, time.Now())
			t.Reset(retainCheck)
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// StoreInfo is the "store" answer: the store's size, its retained range
// and the retention that keeps it (omni stats, omni doctor).
type StoreInfo struct {
	// Dir is the store directory; Bytes the size of the files under it
	// (on a cluster: the home's lock and snapshots only).
	Dir   string `json:"dir"`
	Bytes int64  `json:"bytes"`
	// First..Last is the retained range, FirstTime and LastTime the times
	// of its first and last batches (zero for an empty log).
	First     events.Seq `json:"first"`
	Last      events.Seq `json:"last"`
	FirstTime time.Time  `json:"first_time,omitzero"`
	LastTime  time.Time  `json:"last_time,omitzero"`
	// Remote is set when the log is a cluster's shared stream, which the
	// daemon never prunes.
	Remote bool `json:"remote,omitempty"`
	// Retention is the daemon's setting, LastPass its last retention pass.
	Retention Retention     `json:"retention"`
	LastPass  *RetainRecord `json:"last_pass,omitempty"`
}

// RangeText describes the retained range for people: "seq 1..42,
// 2026-01-01 to 2026-02-03" (or "empty").
func (si StoreInfo) RangeText() string {
	if si.Last == 0 {
		return "empty"
	}
	t := fmt.Sprintf("seq %d..%d", max(si.First, 1), si.Last)
	if !si.FirstTime.IsZero() {
		t += fmt.Sprintf(", %s to %s", si.FirstTime.UTC().Format("2006-01-02 15:04"), si.LastTime.UTC().Format("2006-01-02 15:04 MST"))
	}
	return t
}

// Store reports the store's size, retained range and retention. Errors:
// the log's.
func (s *Service) Store(ctx context.Context, _ struct{}) (StoreInfo, error) {
	out := StoreInfo{Dir: storeDir(s.home), Retention: s.retention}
	if st, ok := s.log.(*jetstream.Store); ok && st.Remote() {
		out.Remote = true
	}
	if s.home != "" {
		out.Bytes = dirBytes(out.Dir)
		out.LastPass = readRetainRecord(s.home)
	}
	var err error
	if out.First, err = s.log.First(ctx); err != nil {
		return out, err
	}
	if out.Last, err = s.log.Last(ctx); err != nil {
		return out, err
	}
	if out.Last == 0 {
		return out, nil
	}
	if b, err := s.log.Get(ctx, max(out.First, 1)); err == nil && len(b) > 0 {
		out.FirstTime = b[0].Time
	}
	if b, err := s.log.Get(ctx, out.Last); err == nil && len(b) > 0 {
		out.LastTime = b[0].Time
	}
	return out, nil
}

// Store asks for the store's size, retained range and retention.
func (c *Client) Store(ctx context.Context) (StoreInfo, error) {
	return call[StoreInfo](ctx, c, MethodStore, struct{}{})
}

// dirBytes is the size of the regular files under dir (0 when it cannot
// be read).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// beforeRangeText completes a message about a sequence or handle older
// than the retained range: where the older batches went and the setting.
func (s *Service) beforeRangeText() string {
	return "omni gc removed the batches before it, by hand (omni gc --before) or as the daemon's retention (" + s.retention.String() + ")"
}
