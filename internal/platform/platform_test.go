package platform

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// implementations returns the implementations this system runs: the
// native one and, where it differs (Linux), the portable one the other
// Unixes run, so their paths are tested here too.
func implementations() []OS {
	n, p := native(), Portable()
	if n.Name() == p.Name() {
		return []OS{n}
	}
	return []OS{n, p}
}

// TestProcesses: a child is alive until it is killed; this process is
// alive; a pid that exited is not.
func TestProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sleep(1)")
	}
	for _, o := range implementations() {
		t.Run(o.Name(), func(t *testing.T) {
			if !o.Alive(os.Getpid()) {
				t.Fatal("this process is not alive")
			}
			c := exec.Command("sleep", "30")
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			if !o.Alive(c.Process.Pid) || o.Stopped(c.Process.Pid) {
				t.Fatalf("child %d: alive %v, stopped %v", c.Process.Pid, o.Alive(c.Process.Pid), o.Stopped(c.Process.Pid))
			}
			if err := o.Kill(c.Process.Pid); err != nil {
				t.Fatal(err)
			}
			_ = c.Wait()
			if o.Alive(c.Process.Pid) {
				t.Fatalf("child %d alive after Kill and wait", c.Process.Pid)
			}
		})
	}
}

// TestGroup: KillGroup ends the command and what it started; a command
// started with Detach runs in a session of its own.
func TestGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	for _, o := range implementations() {
		t.Run(o.Name(), func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "grandchild")
			c := exec.Command("sh", "-c", "sleep 30 & echo $! > "+pidFile+"; wait")
			o.Group(c)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			var gc int
			for deadline := time.Now().Add(5 * time.Second); gc == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
					gc = atoi(string(b[:len(b)-1]))
				}
			}
			if gc == 0 {
				t.Fatal("the grandchild never started")
			}
			if err := o.SignalGroup(c.Process.Pid, TermSignal); err != nil {
				t.Fatal(err)
			}
			_ = c.Wait()
			_ = o.KillGroup(c.Process.Pid) // what the signal left
			for deadline := time.Now().Add(5 * time.Second); o.Alive(gc) && !zombie(gc) && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			if o.Alive(gc) && !zombie(gc) {
				t.Fatalf("grandchild %d survived its group's signal", gc)
			}
		})
	}
}

// TestLockHolder: the holder of a lock that recorded its pid is found
// while it holds the lock, and no one once it is released; the portable
// implementation (macOS) finds it without /proc.
func TestLockHolder(t *testing.T) {
	for _, o := range implementations() {
		t.Run(o.Name(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.lock")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if h := o.LockHolder(path); h != 0 {
				t.Fatalf("unlocked file: holder %d", h)
			}
			unlock := lockFile(t, path)
			if err := WriteHolder(path); err != nil {
				t.Fatal(err)
			}
			if h := o.LockHolder(path); h != os.Getpid() {
				t.Fatalf("locked by this process: holder %d, want %d", h, os.Getpid())
			}
			unlock()
			if h := o.LockHolder(path); h != 0 {
				t.Fatalf("released lock with a stale pid file: holder %d", h)
			}
		})
	}
}

// TestFilesAndShell: free space is positive, a temporary directory is
// writable and ours, a missing path is fs.ErrNotExist, and the shell runs
// a command line with its flag.
func TestFilesAndShell(t *testing.T) {
	for _, o := range implementations() {
		t.Run(o.Name(), func(t *testing.T) {
			dir := t.TempDir()
			if n, err := o.FreeBytes(dir); err != nil || n == 0 {
				t.Fatalf("FreeBytes = %d, %v", n, err)
			}
			if err := o.Writable(dir); err != nil {
				t.Fatalf("Writable(temp dir) = %v", err)
			}
			if err := o.Writable(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Writable(missing) = %v", err)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if o.OwnedByOther(dir, fi) {
				t.Fatal("a directory this test made belongs to another user")
			}
			sh, flag := o.Shell()
			out, err := exec.Command(sh, flag, "echo omni").Output()
			if err != nil || string(out) != "omni\n" && string(out) != "omni\r\n" {
				t.Fatalf("%s %s: %q, %v", sh, flag, out, err)
			}
		})
	}
	for path, want := range map[string]string{"/bin/bash": "-c", `C:\Windows\System32\cmd.exe`: "/C", "pwsh": "-Command", "powershell.exe": "-Command", "sh": "-c"} {
		if got := ShellFlag(path); got != want {
			t.Errorf("ShellFlag(%s) = %s, want %s", path, got, want)
		}
	}
}

// TestUse: Use swaps the implementation the functions call and restores
// it.
func TestUse(t *testing.T) {
	restore := Use(Portable())
	if Current().Name() != Portable().Name() {
		t.Fatalf("Current is %s after Use(Portable())", Current().Name())
	}
	restore()
	if Current().Name() != native().Name() {
		t.Fatalf("Current is %s after restore", Current().Name())
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestOwnedByOther: a file this process made is its own; one chowned to
// another uid is another user's, for the native implementation and the
// portable one (macOS's). Chown needs root: skipped otherwise.
func TestOwnedByOther(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root on a Unix")
	}
	path := filepath.Join(t.TempDir(), "addr")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range implementations() {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if o.OwnedByOther(path, fi) {
			t.Errorf("%s: this process's file reads as another user's", o.Name())
		}
	}
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Skip(err)
	}
	for _, o := range implementations() {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !o.OwnedByOther(path, fi) {
			t.Errorf("%s: a file of uid 4242 reads as this user's", o.Name())
		}
	}
}
