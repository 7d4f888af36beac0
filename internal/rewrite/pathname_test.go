package rewrite

import "testing"

// TestPathNameOKPerSystem: the rewrite names only a POSIX absolute path of
// word characters whose base name starts with omni; a Windows path (what
// omni init sees there) is refused on every system alike, so the rewrite
// is left out on Windows rather than written in a form bash or Unwrap
// would misread.
func TestPathNameOKPerSystem(t *testing.T) {
	for p, want := range map[string]bool{
		"/usr/local/bin/omni":            true,
		"/Users/a/go/bin/omni-dev":       true,
		"/Users/a b/go/bin/omni":         false, // a space
		"/opt/tools/notomni":             false,
		"omni":                           false, // not absolute
		`C:\Program Files\omni\omni.exe`: false,
		`C:\Users\a\go\bin\omni.exe`:     false,
		"C:/Users/a/go/bin/omni.exe":     false, // absolute on Windows only
		"/c/Users/a/go/bin/omni.exe":     true,  // Git Bash's own form
		`/home/a/bin\omni`:               false,
		"":                               false,
	} {
		if got := PathNameOK(p); got != want {
			t.Errorf("PathNameOK(%q) = %v, want %v", p, got, want)
		}
	}
}
