//go:build unix

package systest

import (
	"github.com/omnictx/omni/internal/testbin"

	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDamagedStoreStart: a sweep of byte flips over the sequence fields
// of a real home's message block (bytes 3–6 of a record's sequence made
// nats-server loop and allocate without bound): the daemon never hangs
// (it refuses the store within seconds, peak RSS far under 512 MiB),
// hooks fail open at once, doctor names the damaged file, and
// 'omni gc --repair' gives back every batch (replay --verify: every
// invocation identical).
func TestDamagedStoreStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds omni and runs daemons")
	}
	bin := filepath.Join(testbin.Dir(t, false), "omni")
	src := filepath.Join(t.TempDir(), "home")
	var text strings.Builder
	for k := 0; k < 30; k++ {
		fmt.Fprintf(&text, "line %02d of a build log that repeats\n", k)
	}
	const calls = 6
	for i := 0; i < calls; i++ {
		runHookBin(t, src, []string{bin, "hook"}, bashPayload(fmt.Sprintf("s%d", i), src, text.String()))
	}
	omni := func(home string, args ...string) (string, error) {
		c := exec.Command(bin, args...)
		c.Env = append(hookEnv(home), "OMNI_NO_DAEMON=")
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := omni(src, "daemon", "--stop"); err != nil {
		t.Fatalf("daemon --stop: %v\n%s", err, out)
	}
	blks, _ := filepath.Glob(filepath.Join(src, "store", "js", "jetstream", "*", "streams", "EVENTS", "msgs", "*.blk"))
	if len(blks) != 1 {
		t.Fatalf("block files %v", blks)
	}
	blk0, _ := os.ReadFile(blks[0])
	var offs []int
	for off := 0; off+22 <= len(blk0); {
		rl := int(binary.LittleEndian.Uint32(blk0[off:]) &^ (1 << 31))
		if rl == 0 {
			break
		}
		offs = append(offs, off)
		off += rl
	}
	var worstRSS int64
	var worstStart time.Duration
	for _, rec := range []int{0, len(offs) / 2, len(offs) - 1} {
		for _, bi := range []int{3, 4, 5, 6} {
			home := filepath.Join(t.TempDir(), "home")
			if err := os.CopyFS(home, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			blk := strings.Replace(blks[0], src, home, 1)
			b := append([]byte(nil), blk0...)
			b[offs[rec]+4+bi] ^= 0xff
			if err := os.WriteFile(blk, b, 0o600); err != nil {
				t.Fatal(err)
			}
			// The daemon in the foreground: it must give up, not loop.
			c := exec.Command(bin, "daemon")
			c.Env = hookEnv(home)
			t0 := time.Now()
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = c.Process.Kill()
				t.Fatalf("record %d byte %d: the daemon hangs on the damaged store", rec, bi)
			}
			d := time.Since(t0)
			rss := c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
			worstRSS, worstStart = max(worstRSS, rss), max(worstStart, d)
			if rss > 512<<10 {
				t.Fatalf("record %d byte %d: daemon peak RSS %d MiB", rec, bi, rss>>10)
			}
			// Hooks fail open at once.
			hd, out := runHookBin(t, home, []string{bin, "hook"}, bashPayload("s0", home, text.String()))
			if out != "" || hd > 2*time.Second {
				t.Fatalf("hook on a damaged store: %s, printed %q", hd, out)
			}
			dout, _ := omni(home, "doctor")
			if !strings.Contains(dout, blk) || !strings.Contains(dout, "omni gc --repair") {
				t.Fatalf("doctor does not name %s:\n%s", blk, dout)
			}
			if out, err := omni(home, "gc", "--repair"); err != nil || !strings.Contains(out, "moved "+blk) {
				t.Fatalf("gc --repair: %v\n%s", err, out)
			}
			out, err := omni(home, "replay", "--verify")
			want := fmt.Sprintf("invocations %d, compared %d, identical %d, differing 0", calls, calls, calls)
			if err != nil || !strings.Contains(out, want) {
				t.Fatalf("record %d byte %d: replay --verify after repair: %v\n%s\nwant %q", rec, bi, err, out, want)
			}
			_, _ = omni(home, "daemon", "--stop")
		}
	}
	t.Logf("damaged starts: longest %s, daemon peak RSS %d MiB at most", worstStart.Round(time.Millisecond), worstRSS>>10)
}

// TestDoctorMissingStoreFiles: a store whose block file was deleted or
// emptied is not reported as ok, and doctor does not blame omni gc.
func TestDoctorMissingStoreFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds omni and runs daemons")
	}
	bin := filepath.Join(testbin.Dir(t, false), "omni")
	for _, how := range []string{"deleted", "emptied"} {
		t.Run(how, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			for i := 0; i < 4; i++ {
				runHookBin(t, home, []string{bin, "hook"}, bashPayload(fmt.Sprintf("s%d", i), home, "one\ntwo\nthree\n"))
			}
			omni := func(args ...string) string {
				c := exec.Command(bin, args...)
				c.Env = hookEnv(home)
				out, _ := c.CombinedOutput()
				return string(out)
			}
			omni("daemon", "--stop")
			blks, _ := filepath.Glob(filepath.Join(home, "store", "js", "jetstream", "*", "streams", "EVENTS", "msgs", "*.blk"))
			if len(blks) == 0 {
				t.Fatal("no block file")
			}
			if how == "deleted" {
				os.Remove(blks[0])
			} else {
				os.WriteFile(blks[0], nil, 0o600)
			}
			out := omni("doctor")
			t.Logf("doctor:\n%s", out)
			if strings.Contains(out, "store   ok") && !strings.Contains(out, "problem") {
				t.Fatalf("doctor reports a store with a %s block as ok", how)
			}
			if !strings.Contains(out, "deleted or emptied") {
				t.Fatalf("doctor does not say the store's files were deleted or emptied")
			}
			if strings.Contains(out, "omni gc removed older batches") {
				t.Fatal("doctor blames omni gc")
			}
			omni("daemon", "--stop")
		})
	}
}
