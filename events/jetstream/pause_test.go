//go:build unix

package jetstream

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// pauseChildEnv names the store directory the helper process opens.
const pauseChildEnv = "OMNI_TEST_PAUSE_CHILD"

// TestPausedStartNotDamaged: a start whose process is stopped (SIGSTOP, a
// suspended laptop) for longer than StartTimeout is not a stuck start: once
// continued it finishes, and the store is not marked damaged. The helper
// process opens a store whose start takes 600 ms, with a 1 s timeout; the
// test stops it for 2.5 s mid-start. Red when the watch counts wall time.
func TestPausedStartNotDamaged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a helper process")
	}
	dir := t.TempDir()
	c := exec.Command(os.Args[0], "-test.run=^TestPauseChild$", "-test.v")
	c.Env = append(os.Environ(), pauseChildEnv+"="+dir)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() && lines.Text() != "opening" {
	}
	time.Sleep(100 * time.Millisecond) // inside the 600 ms start
	if err := c.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := c.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var last string
	for lines.Scan() {
		last = lines.Text()
		if last == "opened" || len(last) > 6 && last[:6] == "stuck:" {
			break
		}
	}
	_ = c.Wait()
	if last != "opened" {
		t.Fatalf("the paused start ended with %q", last)
	}
	if m, ok := ReadMarker(dir); ok {
		t.Fatalf("a paused start marked the store damaged: %+v", m)
	}
}

// TestPauseChild is the helper process of TestPausedStartNotDamaged.
func TestPauseChild(t *testing.T) {
	dir := os.Getenv(pauseChildEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	o := Options{Dir: dir, StartTimeout: time.Second, startDelay: 600 * time.Millisecond}
	fmt.Println("opening")
	st, err := Open(context.Background(), o)
	if err != nil {
		fmt.Printf("stuck: %v\n", err)
		return
	}
	fmt.Println("opened")
	st.Close()
}
