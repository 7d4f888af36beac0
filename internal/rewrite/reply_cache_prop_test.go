//go:build unix

package rewrite

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReplyCachedSameAsFresh: over random edit sequences of the user's,
// the project's and the local settings files and a managed file (rules
// that allow, ask for or deny the commands asked, same-size rewrites
// with the mtime set back, saves by rename, retargeted links, broken
// JSON, another cwd), the hook's answer with a warm rules cache (the call
// time faked past RacyWindow) is the answer of a hook that reads every
// file afresh (a new omni home each call): the same lines rewritten,
// the same left alone.
func TestReplyCachedSameAsFresh(t *testing.T) {
	rewrote, left := 0, 0
	for seed := int64(0); seed < 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r, l := replySequence(t, seed)
			rewrote, left = rewrote+r, left+l
		})
	}
	if !t.Failed() && (rewrote == 0 || left == 0) {
		t.Errorf("sequences that test nothing: %d rewritten, %d left alone", rewrote, left)
	}
}

var callToken = regexp.MustCompile(`--call [0-9a-f]{32}`)

func replySequence(t *testing.T, seed int64) (rewrote, left int) {
	rng := rand.New(rand.NewSource(seed))
	d := t.TempDir()
	for _, p := range []string{"user", "proj/.claude", "proj/sub/.claude", "store"} {
		if err := os.MkdirAll(filepath.Join(d, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cwd := filepath.Join(d, "proj")
	src := func(string) Sources {
		return Sources{User: filepath.Join(d, "user", "settings.json"), Project: []string{filepath.Join(d, "proj"), cwd},
			Managed: []string{filepath.Join(d, "managed.json")}}
	}
	files := func() []string {
		var out []string
		for _, f := range settingsFiles(src("")) {
			out = append(out, f.path)
		}
		return out
	}
	// rules of one length each, so that a rewrite can keep the size
	pool := []string{`"Bash(go test:*)"`, `"Bash(npm tst:*)"`, `"Bash(go  vet:*)"`, `"Bash(make  x:*)"`, `"Bash(cargo b:*)"`, `"Bash(go t*)    "`}
	doc := func() string {
		pick := func(extra ...string) string {
			out := extra
			for i := rng.Intn(3); i > 0; i-- {
				out = append(out, pool[rng.Intn(len(pool))])
			}
			return "[" + strings.Join(out, ",") + "]"
		}
		allow := pick(`"`+PipefailRule+`"`, `"`+FilterRule(testOmni)+`"`)
		return `{"permissions":{"allow":` + allow + `,"ask":` + pick() + `,"deny":` + pick() + `}}`
	}
	// what the file system can tell apart, whatever the cache records
	stamp := func(p string) string {
		fi, err := os.Stat(p)
		if err != nil {
			return "-"
		}
		st := fi.Sys().(*syscall.Stat_t)
		return fmt.Sprint(st.Dev, st.Ino, fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), ctimeOf(st).UnixNano())
	}
	edit := func() {
		fs := files()
		p := fs[rng.Intn(len(fs))]
		before, _ := os.ReadFile(p)
		st := stamp(p)
		switch rng.Intn(6) {
		case 0, 1:
			_ = os.WriteFile(p, []byte(doc()), 0o644)
		case 2:
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				for i := 0; i < 30; i++ {
					if n := doc(); len(n) == len(before) && n != string(before) {
						_ = os.WriteFile(p, []byte(n), 0o644)
						_ = os.Chtimes(p, fi.ModTime(), fi.ModTime())
						break
					}
				}
			}
		case 3:
			_ = os.WriteFile(p+".tmp", []byte(doc()), 0o644)
			_ = os.Rename(p+".tmp", p)
		case 4:
			target := filepath.Join(d, "store", fmt.Sprint(rng.Intn(2)))
			_ = os.WriteFile(target, []byte(doc()), 0o644)
			_ = os.Remove(p)
			_ = os.Symlink(target, p)
		default:
			if rng.Intn(2) == 0 {
				_ = os.Remove(p)
			} else {
				cwd = filepath.Join(d, "proj", []string{"", "sub"}[rng.Intn(2)])
			}
		}
		// an edit the file system cannot tell from the last one (same
		// tick): the time a real user lets pass between edits
		if after, _ := os.ReadFile(p); stamp(p) == st && string(after) != string(before) {
			time.Sleep(15 * time.Millisecond)
			_ = os.WriteFile(p, after, 0o644)
		}
	}
	warm := t.TempDir()
	cmds := []string{"go test ./...", "npm tst", "go vet ./...", "make x", "go tool cover"}
	for step := 0; step < 30; step++ {
		for k := rng.Intn(2) + 1; k > 0; k-- {
			edit()
		}
		for _, c := range cmds {
			in := payload(c, []string{"default", "acceptEdits", "bypassPermissions"}[rng.Intn(3)], nil)
			cached := Reply(in, PreTool{Omni: testOmni, Home: warm, Sources: src, Getenv: func(string) string { return "" },
				Now: func() time.Time { return time.Now().Add(2 * RacyWindow) }})
			fresh := Reply(in, PreTool{Omni: testOmni, Home: t.TempDir(), Sources: src, Getenv: func(string) string { return "" }})
			a, b := callToken.ReplaceAllString(string(cached), ""), callToken.ReplaceAllString(string(fresh), "")
			if fresh == nil {
				left++
			} else {
				rewrote++
			}
			if a != b {
				t.Fatalf("seed %d step %d %q: with the cache %s\nafresh %s", seed, step, c, cached, fresh)
			}
		}
	}
	return rewrote, left
}
