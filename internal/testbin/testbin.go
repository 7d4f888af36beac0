// Package testbin builds the omni and omni-hook binaries once per test
// process for the tests that run them as users do (testscript, storms,
// kill loops, scenarios), and hands each test a directory of its own
// holding them. Only tests import it.
package testbin

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// The one build of this test process, removed by Cleanup.
var (
	once sync.Once
	dir  string
	err  error
	out  []byte
)

// Dir returns a directory of the test's own holding omni (a hard link to,
// or a copy of, the shared build), and omni-hook beside it when thin: omni
// init registers omni-hook for the hooks only when it sits beside omni, and
// daemons are told apart by their binary's path. The first call builds both
// with `go build`; a build failure fails the test with the compiler's
// output.
func Dir(t testing.TB, thin bool) string {
	t.Helper()
	once.Do(func() {
		goBin, lerr := exec.LookPath("go")
		if lerr != nil {
			err = lerr
			return
		}
		if dir, err = os.MkdirTemp("", "omni-test-bin-"); err != nil {
			return
		}
		for _, b := range [][2]string{{"omni", "github.com/omnictx/omni/cmd/omni"}, {"omni-hook", "github.com/omnictx/omni/cmd/omni-hook"}} {
			if out, err = exec.Command(goBin, "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
				return
			}
		}
	})
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	d := t.TempDir()
	names := []string{"omni"}
	if thin {
		names = append(names, "omni-hook")
	}
	for _, n := range names {
		if err := linkOrCopy(filepath.Join(dir, n), filepath.Join(d, n)); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// Omni returns the path of an omni binary of the test's own (Dir without
// omni-hook).
func Omni(t testing.TB) string { return filepath.Join(Dir(t, false), "omni") }

// Parallel raises how many t.Parallel tests of the package run at once
// (the -test.parallel flag, GOMAXPROCS by default: 2 on a two-core
// machine) to n, unless the command line set it. Tests that mostly wait
// for processes they started (hook storms, kill loops, host CLIs) then
// overlap one another instead of queueing behind two. TestMain calls it
// before m.Run; it parses the command line.
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && n > runtime.GOMAXPROCS(0) {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// Cleanup removes the shared build; TestMain calls it after the tests.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// linkOrCopy hard-links src to dst, or copies it (mode kept) through
// writeExecutable when the two are on different file systems.
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeExecutable(dst, data)
}

// WriteExecutable writes data to path as an executable file (mode 0755),
// so that a test can run it at once, failing the test on an error.
//
// On Unix the bytes are written by a child process (sh and cat), never
// through a descriptor of the test process: when a package's parallel
// tests start processes, one of them can fork while the test process
// holds the file open for writing, and that child keeps the descriptor
// until its own exec closes it. Running the file in that window fails
// with ETXTBSY ("text file busy"; golang/go#22315 in the Go issue
// tracker). A descriptor opened in a child is never inherited by the test
// process's other children.
func WriteExecutable(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := writeExecutable(path, data); err != nil {
		t.Fatal(err)
	}
}

func writeExecutable(path string, data []byte) error {
	if runtime.GOOS == "windows" {
		return os.WriteFile(path, data, 0o755)
	}
	c := exec.Command("/bin/sh", "-c", `umask 022 && cat >"$1" && chmod 755 "$1"`, "sh", path)
	c.Stdin = bytes.NewReader(data)
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("write %s: %v: %s", path, err, out)
	}
	return nil
}
