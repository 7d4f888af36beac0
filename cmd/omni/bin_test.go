package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The package's tests share one build of omni and omni-hook, made by the
// first test that needs it and removed by TestMain.
var (
	binOnce sync.Once
	binDir  string
	binErr  error
	binOut  []byte
)

// testBinary returns a directory of the test's own holding omni (a hard
// link to, or a copy of, the shared build), and omni-hook beside it when
// thin: omni init registers omni-hook for the hooks only when it sits
// beside omni, and daemons are told apart by their binary's path.
func testBinary(t *testing.T, thin bool) string {
	t.Helper()
	binOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			binErr = err
			return
		}
		if binDir, binErr = os.MkdirTemp("", "omni-test-bin-"); binErr != nil {
			return
		}
		for _, b := range [][2]string{{"omni", "."}, {"omni-hook", "../omni-hook"}} {
			if binOut, binErr = exec.Command(goBin, "build", "-o", filepath.Join(binDir, b[0]), b[1]).CombinedOutput(); binErr != nil {
				return
			}
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binOut)
	}
	dir := t.TempDir()
	names := []string{"omni"}
	if thin {
		names = append(names, "omni-hook")
	}
	for _, n := range names {
		if err := linkOrCopy(filepath.Join(binDir, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// linkOrCopy hard-links src to dst, or copies it (mode kept) when the two
// are on different file systems.
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
