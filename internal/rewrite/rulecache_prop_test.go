//go:build unix

package rewrite

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadCachedEditSequences: over random sequences of the edits a user,
// an editor, git or an attacker in the project makes to every settings
// file (same-size rewrites with the mtime set back, saves by rename,
// symlinks retargeted, a .claude directory replaced by a link, removals,
// broken JSON, a new managed-settings.d file, another CLAUDE_CONFIG_DIR,
// another cwd), LoadCached answers what Load answers after every step.
//
// The call time is faked past RacyWindow (no 3 s wait). That is
// legitimate only while each edit leaves a stamp different from the
// one before it, as edits seconds apart do; when an edit lands in the
// same timestamp tick as the last (same inode, size, times), the step
// waits a tick and touches the file again, the time passing a real user
// would have let pass.
func TestLoadCachedEditSequences(t *testing.T) {
	seeds := 12
	steps := 40
	if testing.Short() {
		seeds = 4
	}
	for seed := int64(0); seed < int64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { editSequence(t, seed, steps) })
	}
}

func editSequence(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	d := t.TempDir()
	home := filepath.Join(d, "omnihome")
	mk := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"cfgA", "cfgB", "proj/.claude", "proj/sub/.claude", "proj/other/.claude", "alt/.claude", "managed.d", "store"} {
		mk(filepath.Join(d, p))
	}
	cfg := filepath.Join(d, "cfgA")
	cwd := filepath.Join(d, "proj", "sub")
	var extraManaged []string
	sources := func() Sources {
		return Sources{
			User:    filepath.Join(cfg, "settings.json"),
			Project: []string{filepath.Join(d, "proj"), cwd},
			Managed: append([]string{filepath.Join(d, "managed.json")}, extraManaged...),
		}
	}
	// rule contents of one length, so that rewrites keep the size
	rules := []string{"Bash(rm -rf:*)", "Bash(npm tst:*)", "Bash(git psh:*)", "Bash(curl  :*)"}
	doc := func() string {
		pick := func() string {
			var out []string
			for i := rng.Intn(3); i > 0; i-- {
				out = append(out, `"`+rules[rng.Intn(len(rules))]+`"`)
			}
			return "[" + strings.Join(out, ",") + "]"
		}
		m := "false"
		if rng.Intn(6) == 0 {
			m = "true "
		}
		return `{"permissions":{"allow":` + pick() + `,"ask":` + pick() + `,"deny":` + pick() + `},"allowManagedPermissionRulesOnly":` + m + `}`
	}
	targets := func() []string {
		s := sources()
		var out []string
		for _, f := range settingsFiles(s) {
			out = append(out, f.path)
		}
		return append(out, filepath.Join(d, "store", "a.json"), filepath.Join(d, "store", "b.json"))
	}
	// edit applies one random edit and returns its name.
	edit := func() string {
		ts := targets()
		p := ts[rng.Intn(len(ts))]
		switch rng.Intn(11) {
		case 0, 1: // plain write
			_ = os.WriteFile(p, []byte(doc()), 0o644)
			return "write " + p
		case 2: // same size, mtime set back (touch -d)
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				return "skip"
			}
			old, _ := os.ReadFile(p)
			for i := 0; i < 20; i++ {
				n := doc()
				if len(n) == len(old) && n != string(old) {
					_ = os.WriteFile(p, []byte(n), fi.Mode().Perm())
					_ = os.Chtimes(p, fi.ModTime(), fi.ModTime())
					return "same-size+touch " + p
				}
			}
			return "skip"
		case 3: // save by rename
			tmp := p + ".tmp"
			if os.WriteFile(tmp, []byte(doc()), 0o644) == nil {
				_ = os.Rename(tmp, p)
			}
			return "rename over " + p
		case 4: // symlink to a stored file, retargeted
			_ = os.Remove(p)
			_ = os.Symlink(filepath.Join(d, "store", []string{"a.json", "b.json"}[rng.Intn(2)]), p)
			return "symlink " + p
		case 5:
			_ = os.Remove(p)
			return "remove " + p
		case 6:
			_ = os.WriteFile(p, []byte(`{"permissions":`), 0o644)
			return "broken " + p
		case 7: // the project's .claude directory replaced by a link, or back
			c := filepath.Join(d, "proj", ".claude")
			if fi, err := os.Lstat(c); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				_ = os.Remove(c)
				mk(c)
				return "link back to dir"
			}
			_ = os.RemoveAll(c)
			_ = os.Symlink(filepath.Join(d, "alt", ".claude"), c)
			return ".claude -> alt"
		case 8: // a new managed-settings.d file (the glob is taken per call)
			m := filepath.Join(d, "managed.d", fmt.Sprintf("%02d.json", len(extraManaged)))
			_ = os.WriteFile(m, []byte(doc()), 0o644)
			extraManaged = append(extraManaged, m)
			return "managed.d " + m
		case 9:
			if cfg == filepath.Join(d, "cfgA") {
				cfg = filepath.Join(d, "cfgB")
			} else {
				cfg = filepath.Join(d, "cfgA")
			}
			return "CLAUDE_CONFIG_DIR " + cfg
		default:
			cwd = filepath.Join(d, "proj", []string{"sub", "other"}[rng.Intn(2)])
			return "cwd " + cwd
		}
	}
	// stamps are what the file system can tell apart, whatever the
	// cache records: device, inode, size, mode, mtime and ctime.
	stamps := func() map[string]string {
		m := map[string]string{}
		for _, p := range targets() {
			fi, err := os.Stat(p)
			if err != nil {
				m[p] = "-"
				continue
			}
			st := fi.Sys().(*syscall.Stat_t)
			m[p] = fmt.Sprint(st.Dev, st.Ino, fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), ctimeOf(st).UnixNano())
		}
		return m
	}
	var log []string
	for i := 0; i < steps; i++ {
		before := stamps()
		beforeBytes := map[string]string{}
		for p := range before {
			b, _ := os.ReadFile(p)
			beforeBytes[p] = string(b)
		}
		for k := rng.Intn(3) + 1; k > 0; k-- {
			log = append(log, edit())
		}
		// a file whose bytes changed but whose stamp did not was edited
		// within one timestamp tick: let a tick pass and touch it again
		// (its ctime moves), as the time between real edits does.
		for p, st := range stamps() {
			b, _ := os.ReadFile(p)
			if st == before[p] && string(b) != beforeBytes[p] {
				time.Sleep(15 * time.Millisecond)
				_ = os.WriteFile(p, b, 0o644)
			}
		}
		s := sources()
		want, werr := Load(s)
		got, gerr := LoadCached(home, s, time.Now().Add(2*RacyWindow))
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d step %d: LoadCached = %+v, %v; Load = %+v, %v\nedits:\n%s", seed, i, got, gerr, want, werr, strings.Join(log, "\n"))
		}
	}
}
