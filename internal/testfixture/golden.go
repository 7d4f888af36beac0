package testfixture

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// CheckGolden compares got with the golden file testdata/<name> of the
// test's package, or, when update is set (the package's -update flag),
// rewrites that file with got. A missing file or a difference fails the
// test and says how to accept the new output.
func CheckGolden(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test with -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
