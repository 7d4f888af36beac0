//go:build unix

package execrun

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func needBash(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
}

// sh -c (dash) broke bash syntax under the rewrite (docs/HOSTS.md).
func TestBashSyntax(t *testing.T) {
	needBash(t)
	res, err := Run(Options{Args: []string{"echo {a,b}; [[ x == x ]] && echo ok"}})
	if err != nil || string(res.Output) != "a b\nok\n" || res.Code != 0 {
		t.Fatalf("%q %d %v", res.Output, res.Code, err)
	}
}

// stdout and stderr arrive merged in the order the command wrote them.
func TestMergedInOrder(t *testing.T) {
	res, err := Run(Options{Args: []string{"echo 1; echo 2 >&2; echo 3; echo 4 >&2; exit 3"}})
	if err != nil || string(res.Output) != "1\n2\n3\n4\n" || res.Code != 3 {
		t.Fatalf("%q %d %v", res.Output, res.Code, err)
	}
	res, err = Run(Options{Args: []string{"sh", "-c", "printf a; printf b >&2"}})
	if err != nil || string(res.Output) != "ab" || res.Command != "sh -c printf a; printf b >&2" {
		t.Fatalf("argv form: %q %q %v", res.Output, res.Command, err)
	}
	if _, err := Run(Options{Args: []string{"/nonexistent/prog", "x"}}); !errors.Is(err, ErrNotRunnable) {
		t.Fatalf("not runnable: %v", err)
	}
}

// waitGone polls until pid no longer exists (a bounded wait, not a timing
// assertion).
func waitGone(pid int) bool {
	for i := 0; i < 200; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// A signal to omni reaches the whole process group, not only the shell.
func TestSignalReachesGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	sigs := make(chan os.Signal, 1)
	go func() {
		for i := 0; i < 500; i++ {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		sigs <- syscall.SIGTERM
	}()
	res, err := Run(Options{Args: []string{"sleep 60 & echo started; echo $! > " + pidFile + "; wait"}, Signals: sigs})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != syscall.SIGTERM || res.Code != 143 || string(res.Output) != "started\n" {
		t.Fatalf("signal %v code %d output %q", res.Signal, res.Code, res.Output)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 || !waitGone(pid) {
		t.Fatalf("the background sleep %d outlived the SIGTERM", pid)
	}
}

// Stop ends the group and keeps the partial output; a command that
// ignores SIGTERM is killed after the grace.
func TestStopKeepsPartialOutput(t *testing.T) {
	res, err := Run(Options{Args: []string{"echo partial; echo err >&2; sleep 60"}, Stop: 300 * time.Millisecond})
	if err != nil || !res.Stopped || res.Code != 143 || string(res.Output) != "partial\nerr\n" {
		t.Fatalf("stopped %v code %d output %q err %v", res.Stopped, res.Code, res.Output, err)
	}
	res, err = Run(Options{Args: []string{"trap '' TERM; echo stubborn; sleep 60"}, Stop: 200 * time.Millisecond, Grace: 200 * time.Millisecond})
	if err != nil || !res.Stopped || res.Code != 137 || string(res.Output) != "stubborn\n" {
		t.Fatalf("stubborn: stopped %v code %d output %q err %v", res.Stopped, res.Code, res.Output, err)
	}
}

func TestStopBefore(t *testing.T) {
	if StopBefore(0) != 0 || StopBefore(120*time.Second) != 112*time.Second || StopBefore(3*time.Second) != 2*time.Second {
		t.Fatal(StopBefore(120*time.Second), StopBefore(3*time.Second))
	}
}
