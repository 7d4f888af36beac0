//go:build !unix

package rewrite

import (
	"os"
	"reflect"
	"testing"
	"time"
)

// TestLoadCachedSameSizeEditMtimeSetBack: where the stamp is only size,
// mode and modification time (stamp_other.go: Windows), a settings file
// rewritten in place at the same size with its modification time set
// back (touch -d, a restore tool, SetFileTime) keeps its stamp, and the
// cache keeps serving the rules from before the edit: a deny rule added
// that way is not seen. NTFS keeps a change time (FILE_BASIC_INFO
// ChangeTime) and a file index that would tell the two apart.
func TestLoadCachedSameSizeEditMtimeSetBack(t *testing.T) {
	t.Skip("finding: on Windows the rules cache stamp has no change time or file index; a same-size edit with the mtime set back is not seen (rule 8)")
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
