//go:build !unix

package rewrite

import (
	"os"
	"reflect"
	"testing"
	"time"
)

// TestLoadCachedSameSizeEditMtimeSetBack: where fs.FileInfo has no
// change time (stamp_other.go: Windows), a settings file rewritten in
// place at the same size with its modification time set back (touch -d,
// a restore tool, SetFileTime) is still seen: the stamp holds the bytes'
// hash.
func TestLoadCachedSameSizeEditMtimeSetBack(t *testing.T) {
	skipNoCache(t)
	f := newCacheFixture(t)
	writeSettings(t, f.src.User, nil, nil, []string{"Bash(npm xxxx:*)"})
	fi, err := os.Stat(f.src.User)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCached(f.home, f.src, later()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	writeSettings(t, f.src.User, nil, nil, []string{"Bash(npm test:*)"})
	if err := os.Chtimes(f.src.User, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCached(f.home, f.src, later())
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := Load(f.src); !reflect.DeepEqual(got, want) {
		t.Errorf("LoadCached = %+v, Load %+v", got.Deny, want.Deny)
	}
}
