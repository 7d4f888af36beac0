package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/redact"
)

// ForgetReport is what Forget did.
type ForgetReport struct {
	events.Forgotten
	// Seq is the batch of the recorded KindForgotten event (0: the log did
	// not hold the value, and nothing was recorded).
	Seq events.Seq `json:"seq,omitempty"`
	// Rewritten lists the files under the home the value was masked in
	// (logs, base snapshots); Removed those deleted (the checkpoint).
	Rewritten []string `json:"rewritten,omitempty"`
	Removed   []string `json:"removed,omitempty"`
}

// Render writes the report for people: what was found and where, the
// files touched. seqs renders the batches' sequences.
func (rep ForgetReport) Render(w io.Writer, seqs string) {
	if rep.Seq == 0 {
		fmt.Fprintln(w, "the event log does not hold the value")
	} else {
		fmt.Fprintf(w, "forgot %d occurrence(s) in %d batch(es) (seq %s): %d input(s) withheld, %d archived block(s) erased; recorded at seq %d\n",
			rep.Occurrences, len(rep.Seqs), seqs, rep.Withheld, len(rep.Handles), rep.Seq)
	}
	for _, p := range rep.Removed {
		fmt.Fprintf(w, "removed %s\n", p)
	}
	for _, p := range rep.Rewritten {
		fmt.Fprintf(w, "masked in %s\n", p)
	}
}

// forgetKeyPath is the home's key for the keyed hash a KindForgotten event
// records (32 random bytes, created on first use, mode 0600).
func forgetKeyPath(home string) string { return filepath.Join(home, "forget.key") }

// forgetKey reads the home's forget key, creating it when missing.
func forgetKey(home string) ([]byte, error) {
	b, err := os.ReadFile(forgetKeyPath(home))
	if err == nil && len(b) == 32 {
		return b, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(forgetKeyPath(home), b); err != nil {
		return nil, err
	}
	return b, os.Chmod(forgetKeyPath(home), 0o600)
}

// Forget erases value from everything the home of cfg stores: the
// running daemon is stopped (its memory held the projections), the store
// opened alone, every batch that held the value replaced in place
// (hooks.Forget) and the forget recorded; then the checkpoint is removed
// (the next daemon folds the log again), the value is masked in the base
// snapshots (same length, so the snapshot still decodes) and replaced by
// [REDACTED] in every other file under the home, and the store's own
// files are checked for it. Errors: a value too short (hooks.Forget), a
// log on a cluster (hooks.ErrNotRewritable: every machine holds a copy),
// the store's, a file the value is still found in.
func Forget(ctx context.Context, cfg Config, value []byte) (ForgetReport, error) {
	var rep ForgetReport
	if cfg.ClusterURL != "" {
		return rep, fmt.Errorf("%w: the log is a stream on a cluster (OMNI_NATS_URL), which every machine holds", hooks.ErrNotRewritable)
	}
	if len(value) < hooks.MinForgetBytes {
		return rep, fmt.Errorf("a value of %d bytes is too short to forget (at least %d): it would match unrelated text", len(value), hooks.MinForgetBytes)
	}
	if err := CheckHome(cfg.Home); err != nil {
		return rep, err
	}
	key, err := forgetKey(cfg.Home)
	if err != nil {
		return rep, fmt.Errorf("forget key: %w", err)
	}
	log, closeFn, err := OpenStore(ctx, cfg)
	if err != nil {
		return rep, fmt.Errorf("open store: %w", err)
	}
	rep.Forgotten, rep.Seq, err = hooks.Forget(ctx, log, value, key, time.Now())
	if cerr := closeFn(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return rep, err
	}
	if err := scrubHome(cfg.Home, value, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// scrubHome removes value from the files under home (see Forget) and
// fails naming any store file that still holds it.
func scrubHome(home string, value []byte, rep *ForgetReport) error {
	q, _ := json.Marshal(string(value))
	jsonVal := q[1 : len(q)-1] // as written inside a JSON string
	mask := bytes.Repeat([]byte{'*'}, len(value))
	var still []string
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || p == forgetKeyPath(home) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || (!bytes.Contains(b, value) && !bytes.Contains(b, jsonVal)) {
			return nil
		}
		name := filepath.Base(p)
		switch {
		case p == checkpointPath(home):
			if err := os.Remove(p); err != nil {
				return err
			}
			rep.Removed = append(rep.Removed, p)
		case filepath.Dir(p) == storeDir(home) && strings.HasPrefix(name, "base-") && strings.HasSuffix(name, ".bin"):
			// A base snapshot is gob: a string masked to the same length
			// keeps it decodable. Resealed with its new checksum.
			if len(b) < len(baseHeader) || string(b[:len(baseHeader)]) != baseHeader {
				still = append(still, p)
				return nil
			}
			body, err := unseal(b[len(baseHeader):])
			if err != nil {
				still = append(still, p)
				return nil
			}
			body = bytes.ReplaceAll(bytes.ReplaceAll(body, value, mask), jsonVal, bytes.Repeat([]byte{'*'}, len(jsonVal)))
			if err := writeFileAtomic(p, seal(baseHeader, body)); err != nil {
				return err
			}
			rep.Rewritten = append(rep.Rewritten, p)
		case strings.HasPrefix(p, storeDir(home)+string(filepath.Separator)):
			still = append(still, p) // the store's own files: the server's
		default:
			b = bytes.ReplaceAll(bytes.ReplaceAll(b, value, []byte(redact.Marker)), jsonVal, []byte(redact.Marker))
			if err := writeFileAtomic(p, b); err != nil {
				return err
			}
			rep.Rewritten = append(rep.Rewritten, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scrub %s: %w", home, err)
	}
	if len(still) > 0 {
		return fmt.Errorf("the value is still in %s", strings.Join(still, ", "))
	}
	return nil
}
