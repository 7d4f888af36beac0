package rewrite

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// cacheFixture is a home and the settings files of one project.
type cacheFixture struct {
	home string
	src  Sources
}

func newCacheFixture(t *testing.T) cacheFixture {
	t.Helper()
	d := t.TempDir()
	f := cacheFixture{home: filepath.Join(d, "home"), src: Sources{
		User:    filepath.Join(d, "user", "settings.json"),
		Project: []string{filepath.Join(d, "proj"), filepath.Join(d, "proj", "sub")},
		Managed: []string{filepath.Join(d, "managed.json")},
	}}
	for _, p := range []string{filepath.Dir(f.src.User), filepath.Join(d, "proj", ".claude"), filepath.Join(d, "proj", "sub", ".claude")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func writeSettings(t *testing.T, p string, allow, ask, deny []string) {
	t.Helper()
	doc := map[string]any{"permissions": map[string]any{"allow": allow, "ask": ask, "deny": deny}, "model": "x"}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// later is a call time past RacyWindow after every write of the test.
func later() time.Time { return time.Now().Add(2 * RacyWindow) }

func cacheFiles(t *testing.T, home string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(TicketDir(home), "*"+cacheSuffix))
	return m
}

// TestLoadCachedSameAsLoad: over random settings files, the rules read
// from the cache are Load's, field for field (quotes, parentheses,
// spaces, newlines and non-ASCII in rules included).
func TestLoadCachedSameAsLoad(t *testing.T) {
	skipNoCache(t)
	rng := rand.New(rand.NewSource(7))
	words := []string{"Bash", "Bash(npm test:*)", "Read(./.env)", `Bash(echo "a b")`, "Bash(x\ny)", "Edit(~/é/**)", "Bash(a\tb)", "WebFetch(domain:x.y)", "Bash(", ""}
	pick := func() []string {
		var out []string
		for i := rng.Intn(5); i > 0; i-- {
			out = append(out, words[rng.Intn(len(words))])
		}
		return out
	}
	for i := 0; i < 40; i++ {
		f := newCacheFixture(t)
		paths := append(append([]string{}, f.src.Managed...), f.src.User,
			filepath.Join(f.src.Project[0], ".claude", "settings.json"),
			filepath.Join(f.src.Project[0], ".claude", "settings.local.json"),
			filepath.Join(f.src.Project[1], ".claude", "settings.json"))
		for _, p := range paths {
			if rng.Intn(3) > 0 {
				writeSettings(t, p, pick(), pick(), pick())
			}
		}
		if rng.Intn(4) == 0 {
			if err := os.WriteFile(f.src.Managed[0], []byte(`{"allowManagedPermissionRulesOnly":true,"permissions":{"allow":["Bash(ls)"]}}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := Load(f.src)
		if err != nil {
			t.Fatal(err)
		}
		first, err := LoadCached(f.home, f.src, later())
		if err != nil || !reflect.DeepEqual(first, want) {
			t.Fatalf("case %d: first LoadCached = %+v, %v; Load = %+v", i, first, err, want)
		}
		if len(cacheFiles(t, f.home)) != 1 {
			t.Fatalf("case %d: no cache written for settled files", i)
		}
		second, err := LoadCached(f.home, f.src, later())
		if err != nil || !reflect.DeepEqual(second, want) {
			t.Fatalf("case %d: cached rules = %+v, %v; Load = %+v", i, second, err, want)
		}
	}
}

// TestLoadCachedSeesEveryChange: a deny rule added after the cache was
// written is seen on the next call, whether the file keeps its size and
// modification time, is created, or is replaced by a rename; a removed
// file drops its rules.
func TestLoadCachedSeesEveryChange(t *testing.T) {
	skipNoCache(t)
	hasDeny := func(r *Rules, content string) bool {
		for _, d := range r.Deny {
			if d.Content == content {
				return true
			}
		}
		return false
	}
	user := func(f cacheFixture) string { return f.src.User }
	local := func(f cacheFixture) string {
		return filepath.Join(f.src.Project[0], ".claude", "settings.local.json")
	}
	cases := []struct {
		name   string
		change func(t *testing.T, f cacheFixture)
		want   bool // the deny rule "npm test:*" is in force after the change
	}{
		{"same size and mtime", func(t *testing.T, f cacheFixture) {
			fi, err := os.Stat(user(f))
			if err != nil {
				t.Fatal(err)
			}
			writeSettings(t, user(f), nil, nil, []string{"Bash(npm test:*)"}) // same length as "npm xxxx:*"
			if fi2, _ := os.Stat(user(f)); fi2.Size() != fi.Size() {
				t.Fatalf("size changed: %d -> %d", fi.Size(), fi2.Size())
			}
			if err := os.Chtimes(user(f), fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"file created", func(t *testing.T, f cacheFixture) {
			writeSettings(t, local(f), nil, nil, []string{"Bash(npm test:*)"})
		}, true},
		{"file replaced by rename", func(t *testing.T, f cacheFixture) {
			tmp := user(f) + ".new"
			writeSettings(t, tmp, nil, nil, []string{"Bash(npm test:*)"})
			if err := os.Rename(tmp, user(f)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"file removed", func(t *testing.T, f cacheFixture) {
			if err := os.Remove(user(f)); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newCacheFixture(t)
			writeSettings(t, user(f), nil, nil, []string{"Bash(npm xxxx:*)"})
			if c.name == "file removed" {
				writeSettings(t, user(f), nil, nil, []string{"Bash(npm test:*)"})
			}
			before, err := LoadCached(f.home, f.src, later())
			if err != nil || len(cacheFiles(t, f.home)) != 1 {
				t.Fatalf("cache not written: %v", err)
			}
			if c.name == "file removed" != hasDeny(before, "npm test:*") {
				t.Fatalf("before: %+v", before.Deny)
			}
			time.Sleep(20 * time.Millisecond) // past the clock tick of the first write
			c.change(t, f)
			got, err := LoadCached(f.home, f.src, later())
			if err != nil {
				t.Fatal(err)
			}
			if hasDeny(got, "npm test:*") != c.want {
				t.Fatalf("after %s: deny = %+v, want npm test:* %v", c.name, got.Deny, c.want)
			}
			if want, _ := Load(f.src); !reflect.DeepEqual(got, want) {
				t.Fatalf("after %s: %+v, Load %+v", c.name, got, want)
			}
		})
	}
}

// TestLoadCachedRacyFilesNotCached: a settings file changed within
// RacyWindow of the call is read again on every call and no cache is
// written for it.
func TestLoadCachedRacyFilesNotCached(t *testing.T) {
	skipNoCache(t)
	f := newCacheFixture(t)
	writeSettings(t, f.src.User, nil, nil, []string{"rm:*"})
	if _, err := LoadCached(f.home, f.src, time.Now()); err != nil {
		t.Fatal(err)
	}
	if m := cacheFiles(t, f.home); len(m) != 0 {
		t.Fatalf("cache written for a file changed just now: %v", m)
	}
}

// TestLoadCachedDistrustsBadCache: a cache file that is torn, extended,
// of another version, readable by others or a symbolic link is not
// believed; the rules come from the files.
func TestLoadCachedDistrustsBadCache(t *testing.T) {
	skipNoCache(t)
	spoil := map[string]func(t *testing.T, p string){
		"torn": func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-4], 0o600)
		},
		"extended": func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, "deny 0 4:Bash 0:\n"...), 0o600)
		},
		"other version": func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), cacheVersion, "omni-rules 0", 1)), 0o600)
		},
		"rules dropped": func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			var keep []string
			for _, l := range strings.SplitAfter(string(b), "\n") {
				if !strings.HasPrefix(l, "deny ") {
					keep = append(keep, l)
				}
			}
			os.WriteFile(p, []byte(strings.Join(keep, "")), 0o600)
			// the stamps still match: a cache edited by hand is believed
			// (the home is the user's own); this case checks the test
			// itself sees a change of rules.
		},
		"group readable": func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), "\nend\n", "\n", 1)+"deny 0 4:Bash 0:\nend\n"), 0o600)
			os.Chmod(p, 0o640)
		},
		"symbolic link": func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			other := p + ".elsewhere"
			os.WriteFile(other, []byte(strings.Replace(string(b), "\nend\n", "\n", 1)+"deny 0 4:Bash 0:\nend\n"), 0o600)
			os.Remove(p)
			if err := os.Symlink(other, p); err != nil {
				t.Skip("no symbolic links here")
			}
		},
	}
	for name, fn := range spoil {
		t.Run(name, func(t *testing.T) {
			if runtime.GOOS == "windows" && (name == "group readable" || name == "symbolic link") {
				t.Skip("unix file modes")
			}
			f := newCacheFixture(t)
			writeSettings(t, f.src.User, []string{"Bash(ls)"}, nil, []string{"rm:*"})
			want, _ := Load(f.src)
			if _, err := LoadCached(f.home, f.src, later()); err != nil {
				t.Fatal(err)
			}
			m := cacheFiles(t, f.home)
			if len(m) != 1 {
				t.Fatal("no cache")
			}
			fn(t, m[0])
			got, err := LoadCached(f.home, f.src, later())
			if err != nil {
				t.Fatal(err)
			}
			if name == "rules dropped" {
				if len(got.Deny) != 0 {
					t.Fatalf("hand-edited cache with intact stamps not read: %+v", got.Deny)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s cache believed: %+v, want %+v", name, got, want)
			}
		})
	}
}

// TestLoadCachedErrorsNotCached: a settings file that is not JSON keeps
// failing (nothing may be rewritten) and leaves no cache.
func TestLoadCachedErrorsNotCached(t *testing.T) {
	skipNoCache(t)
	f := newCacheFixture(t)
	if err := os.WriteFile(f.src.User, []byte(`{"permissions":`), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := LoadCached(f.home, f.src, later()); err == nil {
			t.Fatal("broken settings file read as no rules")
		}
	}
	if m := cacheFiles(t, f.home); len(m) != 0 {
		t.Fatalf("cache written for a broken file: %v", m)
	}
}

// TestRulesCachePerProject: two projects never share a cache file.
func TestRulesCachePerProject(t *testing.T) {
	a := settingsFiles(Sources{User: "/u", Project: []string{"/p/a"}})
	b := settingsFiles(Sources{User: "/u", Project: []string{"/p/b"}})
	c := settingsFiles(Sources{User: "/u", Project: []string{"/p", "/p/a"}})
	seen := map[string]string{}
	for i, fs := range [][]settingsFile{a, b, c} {
		p := rulesCachePath("/h", fs)
		if prev, ok := seen[p]; ok {
			t.Fatalf("sources %d and %s share %s", i, prev, p)
		}
		seen[p] = fmt.Sprint(i)
	}
}

// skipNoCache skips a test of the cache itself where LoadCached never
// caches (Windows).
func skipNoCache(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("LoadCached reads through Load on Windows")
	}
}
