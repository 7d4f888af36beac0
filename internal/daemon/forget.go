package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

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
	forms := hooks.Forms(value)
	mask := bytes.Repeat([]byte{'*'}, len(value))
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		return err
	}
	defer dec.Close()
	var still []string
	inStore := func(p string) bool { return strings.HasPrefix(p, storeDir(home)+string(filepath.Separator)) }
	err = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || p == forgetKeyPath(home) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		if !holdsAny(b, forms) {
			// A store file may hold it inside a compressed output (an
			// input or block is stored as base64 of a zstd frame) that
			// the log no longer names: a batch removed without being
			// overwritten.
			if inStore(p) && compressedHolds(b, forms, dec) {
				still = append(still, p+" (inside a compressed output)")
			}
			return nil
		}
		name := filepath.Base(p)
		switch {
		case isCheckpointFile(home, p):
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
			for _, f := range forms {
				m := mask
				if len(f) != len(value) {
					m = bytes.Repeat([]byte{'*'}, len(f))
				}
				body = bytes.ReplaceAll(body, f, m)
			}
			if err := writeFileAtomic(p, seal(baseHeader, body)); err != nil {
				return err
			}
			rep.Rewritten = append(rep.Rewritten, p)
		case inStore(p):
			still = append(still, p) // the store's own files: the server's
		default:
			for _, f := range forms {
				b = bytes.ReplaceAll(b, f, []byte(redact.Marker))
			}
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
		return fmt.Errorf("the value is still in %s: the bytes of batches the log no longer holds (removed by an omni gc that "+
			"did not overwrite them; omni gc now overwrites what it removes), which omni cannot rewrite in the store's own files "+
			"without damaging the store. To erase them, stop the daemon ('omni daemon stop') and move %s away (the log then "+
			"starts empty), or keep it until the store rewrites that block", strings.Join(still, ", "), storeDir(home))
	}
	return nil
}

// holdsAny reports whether b holds one of forms.
func holdsAny(b []byte, forms [][]byte) bool {
	for _, f := range forms {
		if bytes.Contains(b, f) {
			return true
		}
	}
	return false
}

// zstdB64 is the base64 of the zstd frame magic (28 b5 2f fd): where an
// event's compressed input or block starts in the JSON a batch is stored as.
const zstdB64 = "KLUv/"

// compressedHolds reports whether a compressed output stored in b (a
// store file: base64 zstd frames inside JSON) decodes to text that holds
// one of forms.
func compressedHolds(b []byte, forms [][]byte, dec *zstd.Decoder) bool {
	for at := 0; ; {
		k := bytes.Index(b[at:], []byte(zstdB64))
		if k < 0 {
			return false
		}
		s := at + k
		e := s
		for e < len(b) && (b[e] >= 'A' && b[e] <= 'Z' || b[e] >= 'a' && b[e] <= 'z' || b[e] >= '0' && b[e] <= '9' || b[e] == '+' || b[e] == '/' || b[e] == '=') {
			e++
		}
		at = e
		raw, err := base64.StdEncoding.DecodeString(string(b[s:e]))
		if err != nil {
			continue
		}
		if text, err := dec.DecodeAll(raw, nil); err == nil && holdsAny(text, forms) {
			return true
		}
	}
}
