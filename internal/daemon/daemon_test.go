package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/platform"
	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/omnictx/omni/internal/testbin"
)

// fakeDaemon is the handler the tests serve: "hook" echoes, "stats" appends
// one event and replies with its sequence, "call" with request "hang" waits
// for its context, "explain" fails.
type fakeDaemon struct {
	closed atomic.Bool
	calls  atomic.Int64
	// closeDelay makes the handler's close slow: the daemon then holds the
	// store lock for that long after it stopped answering.
	closeDelay time.Duration
}

func (f *fakeDaemon) factory(ctx context.Context, log events.Log) (Handler, func() error, error) {
	h := func(ctx context.Context, method string, req []byte) ([]byte, error) {
		f.calls.Add(1)
		if f.closed.Load() {
			return nil, errors.New("handler used after close")
		}
		switch method {
		case "hook":
			return append([]byte("hook:"), req...), nil
		case "stats":
			seq, err := log.Append(ctx, []events.Event{{ID: "01J00000000000000000000000", Kind: events.KindCompacted,
				Time: time.Unix(0, 0).UTC(), Compacted: &events.Compacted{Trigger: "PreCompact"}}})
			if err != nil {
				return nil, err
			}
			return []byte(fmt.Sprint(seq)), nil
		case "call":
			if string(req) == "hang" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return req, nil
		case "explain":
			return nil, errors.New("nothing to explain")
		}
		return nil, fmt.Errorf("unknown method %s", method)
	}
	return h, func() error {
		time.Sleep(f.closeDelay)
		f.closed.Store(true)
		return nil
	}, nil
}

// daemonRun is one runDaemon goroutine: done is closed when it returned err.
type daemonRun struct {
	done chan struct{}
	err  error
}

// startDaemon runs runDaemon in a goroutine on home and waits until it
// answers.
func startDaemon(t *testing.T, home string, idle time.Duration, f *fakeDaemon) *daemonRun {
	t.Helper()
	r := &daemonRun{done: make(chan struct{})}
	go func() {
		r.err = Run(context.Background(), Config{Home: home, Version: testVersion}, idle, t.Logf, f.factory)
		close(r.done)
	}()
	t.Cleanup(func() {
		_, _ = clientOf(home).Stop(context.Background(), 5*time.Second)
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Error("daemon did not stop at cleanup")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := clientOf(home).callDaemon(ctx, "ping", nil, false, 0)
		cancel()
		if err == nil {
			return r
		}
		select {
		case <-r.done:
			t.Fatalf("runDaemon returned early: %v", r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not ready: %v", err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitDone waits for runDaemon's result.
func waitDone(t *testing.T, r *daemonRun, within time.Duration) {
	t.Helper()
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("runDaemon: %v", r.err)
		}
	case <-time.After(within):
		t.Fatalf("runDaemon still running after %s", within)
	}
}

func callT(t *testing.T, home, method, req string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := clientOf(home).callDaemon(ctx, method, []byte(req), false, 0)
	return string(b), err
}

func TestDaemonRoundTrip(t *testing.T) {
	home := t.TempDir()
	f := &fakeDaemon{}
	done := startDaemon(t, home, time.Minute, f)

	fi, err := os.Stat(addrPath(home))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("daemon.addr mode = %v, %v; want 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(addrPath(home))
	var ad wire.Addr
	if err := json.Unmarshal(b, &ad); err != nil || ad.Protocol != wire.Protocol || ad.PID != os.Getpid() ||
		len(ad.Token) != 32 || !strings.HasPrefix(ad.Addr, "127.0.0.1:") || ad.Version == "" {
		t.Fatalf("daemon.addr = %s (%v)", b, err)
	}

	if got, err := callT(t, home, "hook", "payload"); err != nil || got != "hook:payload" {
		t.Fatalf("hook = %q, %v", got, err)
	}
	if got, err := callT(t, home, "ping", ""); err != nil || got != pong {
		t.Fatalf("ping = %q, %v", got, err)
	}
	for want := 1; want <= 3; want++ {
		if got, err := callT(t, home, "stats", ""); err != nil || got != fmt.Sprint(want) {
			t.Fatalf("stats = %q, %v; want %d", got, err, want)
		}
	}
	_, err = callT(t, home, "explain", "")
	var re *wire.RemoteError
	if !errors.As(err, &re) || re.Msg != "nothing to explain" {
		t.Fatalf("explain err = %v, want a RemoteError", err)
	}
	if n := f.calls.Load(); n != 5 {
		t.Fatalf("handler called %d times, want 5 (ping is answered by the daemon)", n)
	}

	// Concurrent clients.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			if got, err := callT(t, home, "hook", fmt.Sprint(i)); err != nil || got != fmt.Sprint("hook:", i) {
				t.Errorf("concurrent hook %d = %q, %v", i, got, err)
			}
		})
	}
	wg.Wait()

	running, err := clientOf(home).Stop(context.Background(), 5*time.Second)
	if err != nil || !running {
		t.Fatalf("stopDaemon = %v, %v; want true", running, err)
	}
	waitDone(t, done, 5*time.Second)
	if !f.closed.Load() {
		t.Fatal("handler not closed")
	}
	if _, err := os.Stat(addrPath(home)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("daemon.addr left behind: %v", err)
	}
	if locked, _ := jetstream.Locked(storeDir(home)); locked {
		t.Fatal("store still locked after stop")
	}
	if running, err := clientOf(home).Stop(context.Background(), time.Second); err != nil || running {
		t.Fatalf("stopDaemon with none = %v, %v; want false", running, err)
	}

	// The log survives: a new daemon continues the sequence.
	f2 := &fakeDaemon{}
	done = startDaemon(t, home, time.Minute, f2)
	if got, err := callT(t, home, "stats", ""); err != nil || got != "4" {
		t.Fatalf("stats after restart = %q, %v; want 4", got, err)
	}
	if got, err := callT(t, home, "stop", ""); err != nil || got != "stopping" {
		t.Fatalf("stop = %q, %v", got, err)
	}
	waitDone(t, done, 5*time.Second)
}

func TestDaemonSecondExits(t *testing.T) {
	home := t.TempDir()
	startDaemon(t, home, time.Minute, &fakeDaemon{})
	f := &fakeDaemon{}
	start := time.Now()
	if err := Run(context.Background(), Config{Home: home, Version: testVersion}, time.Minute, t.Logf, f.factory); err != nil {
		t.Fatalf("second runDaemon: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("second runDaemon took %s", d)
	}
	if f.calls.Load() != 0 || f.closed.Load() {
		t.Fatal("second daemon built a handler")
	}
	if got, err := callT(t, home, "hook", "x"); err != nil || got != "hook:x" {
		t.Fatalf("first daemon after a second start: %q, %v", got, err)
	}
}

func TestDaemonIdleExit(t *testing.T) {
	home := t.TempDir()
	start := time.Now()
	done := startDaemon(t, home, 300*time.Millisecond, &fakeDaemon{})
	// A request in flight holds the daemon up, even past the idle time.
	if got, err := callT(t, home, "hook", "x"); err != nil || got != "hook:x" {
		t.Fatalf("hook = %q, %v", got, err)
	}
	waitDone(t, done, 3*time.Second)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("idle exit after %s, before the idle time", d)
	}
	if _, err := os.Stat(addrPath(home)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("daemon.addr left behind: %v", err)
	}
	if _, err := callT(t, home, "hook", "x"); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("call after idle exit: %v, want ErrNoDaemon", err)
	}
}

func TestDaemonHomeRemoved(t *testing.T) {
	old := homeCheck
	homeCheck = 50 * time.Millisecond
	t.Cleanup(func() { homeCheck = old })
	home := filepath.Join(t.TempDir(), "home")
	done := startDaemon(t, home, time.Minute, &fakeDaemon{})
	if err := os.RemoveAll(home); err != nil {
		t.Logf("RemoveAll: %v", err) // the server may still write; the daemon exits anyway
	}
	waitDone(t, done, 5*time.Second)
}

func TestDaemonSignal(t *testing.T) {
	home := t.TempDir()
	done := startDaemon(t, home, time.Minute, &fakeDaemon{})
	self, _ := os.FindProcess(os.Getpid())
	if err := self.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done, 5*time.Second)
	if locked, _ := jetstream.Locked(storeDir(home)); locked {
		t.Fatal("store still locked after SIGTERM")
	}
}

func TestCallDaemonHung(t *testing.T) {
	home := t.TempDir()
	startDaemon(t, home, time.Minute, &fakeDaemon{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := clientOf(home).callDaemon(ctx, "call", []byte("hang"), true, time.Second)
	if err == nil || errors.Is(err, ErrNoDaemon) {
		t.Fatalf("hung call err = %v; want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("hung call returned after %s with a 200ms deadline", d)
	}
}

func TestCallDaemonUnreachable(t *testing.T) {
	home := t.TempDir()
	start := time.Now()
	if _, err := callT(t, home, "hook", "x"); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("no daemon.addr: %v, want ErrNoDaemon", err)
	}
	// A stale address: a port nobody listens on.
	st, err := jetstream.Open(context.Background(), listenOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	stale := st.Addr()
	_ = st.Close()
	if err := writeAddr(home, addrOf(stale)); err != nil {
		t.Fatal(err)
	}
	if _, err := callT(t, home, "hook", "x"); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("stale daemon.addr: %v, want ErrNoDaemon", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("unreachable calls took %s", d)
	}
}

func TestCallDaemonProtocolMismatch(t *testing.T) {
	home := t.TempDir()
	f := &fakeDaemon{}
	done := startDaemon(t, home, time.Minute, f)
	ad, err := wire.ReadAddr(home)
	if err != nil {
		t.Fatal(err)
	}
	ad.Protocol = wire.Protocol + 1 // pretend it is another omni version
	if err := writeAddr(home, ad); err != nil {
		t.Fatal(err)
	}
	if _, err := callT(t, home, "hook", "x"); !errors.Is(err, ErrNoDaemon) || !errors.Is(err, errProtocolMismatch) {
		t.Fatalf("mismatched protocol: %v, want ErrNoDaemon", err)
	}
	// Nothing was sent to it (it has no certificate to prove), and as it
	// runs in this process it was not signalled: TestReplaceProtocol
	// stops one by its pid.
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("the daemon of another protocol got %d requests", n)
	}
	ad.Protocol = wire.Protocol
	if err := writeAddr(home, ad); err != nil {
		t.Fatal(err)
	}
	_ = done
}

// TestDaemonHelperProcess is not a test: it is the daemon process that the
// spawn tests start (the test binary re-executed with this test selected).
func TestDaemonHelperProcess(t *testing.T) {
	if os.Getenv("OMNI_DAEMON_HELPER") != "1" {
		t.Skip("helper process for the spawn tests")
	}
	f := &fakeDaemon{}
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	err := Run(context.Background(), Config{Home: os.Getenv("OMNI_HOME"), Version: testVersion}, 30*time.Second, logf, f.factory)
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// testVersion is the version the tests' daemons and services write.
const testVersion = "test"

// pong is the reply of ping.
var pong = fmt.Sprint("pong ", wire.Protocol)

// testSpawn is the spawn command of clientOf's clients (nil: this
// executable with "daemon").
var testSpawn func(home string) (*exec.Cmd, error)

// testAnyBuild makes clientOf's clients use a daemon of another build.
var testAnyBuild bool

// clientOf returns a client of home that spawns testSpawn.
func clientOf(home string) *Client {
	c := NewClient(Config{Home: home, Version: testVersion})
	c.SpawnCommand = testSpawn
	c.anyBuild = testAnyBuild
	return c
}

// useSpawn makes callDaemon spawn exe with args (plus env) for the test.
func useSpawn(t *testing.T, exe string, env []string, args ...string) {
	old := testSpawn
	testSpawn = func(home string) (*exec.Cmd, error) {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), env...)
		return cmd, nil
	}
	t.Cleanup(func() { testSpawn = old })
}

// storm runs n concurrent spawning calls of method against a fresh home and
// checks that they all get replies from one daemon, then stops it.
func storm(t *testing.T, home, method string, n int, check func(reply string) error) {
	t.Helper()
	t.Cleanup(func() { _, _ = clientOf(home).Stop(context.Background(), 5*time.Second) })
	var wg sync.WaitGroup
	var pids sync.Map
	lat := make([]time.Duration, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			t0 := time.Now()
			reply, err := clientOf(home).callDaemon(ctx, method, []byte(fmt.Sprint(i)), true, 15*time.Second)
			lat[i] = time.Since(t0)
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			if err := check(string(reply)); err != nil {
				t.Errorf("client %d: %v", i, err)
			}
			if ad, err := wire.ReadAddr(home); err == nil {
				pids.Store(ad.PID, true)
			}
		})
	}
	wg.Wait()
	t.Logf("%d spawning clients done in %s; latencies %v", n, time.Since(start).Round(time.Millisecond), lat)
	if t.Failed() {
		logs, _ := os.ReadFile(filepath.Join(home, "daemon.log"))
		t.Fatalf("daemon.log:\n%s", logs)
	}
	npids := 0
	pids.Range(func(any, any) bool { npids++; return true })
	if npids != 1 {
		t.Fatalf("clients saw %d daemons", npids)
	}
	ad, err := wire.ReadAddr(home)
	if err != nil {
		t.Fatal(err)
	}
	if !platform.Alive(ad.PID) {
		t.Fatalf("daemon pid %d not running", ad.PID)
	}
	// Exactly one daemon holds the store: a non-blocking lock attempt fails.
	if locked, err := jetstream.Locked(storeDir(home)); err != nil || !locked {
		t.Fatalf("store lock held = %v, %v; want true", locked, err)
	}
	// Redundant daemons exit (late starters may still be on their way
	// to the lock): in the end only the owner holds daemon.log open.
	if runtime.GOOS == "linux" {
		deadline := time.Now().Add(10 * time.Second)
		for {
			n := processesWithFile(t, filepath.Join(home, "daemon.log"))
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d processes hold daemon.log, want 1 daemon", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if cur, err := wire.ReadAddr(home); err != nil || cur.PID != ad.PID {
			t.Fatalf("daemon changed while redundant ones exited: %+v, %v", cur, err)
		}
	}
	running, err := clientOf(home).Stop(context.Background(), 10*time.Second)
	if err != nil || !running {
		t.Fatalf("stopDaemon = %v, %v", running, err)
	}
	if platform.Alive(ad.PID) {
		// The process may still be exiting after releasing the lock.
		time.Sleep(100 * time.Millisecond)
	}
	logs, _ := os.ReadFile(filepath.Join(home, "daemon.log"))
	t.Logf("daemon.log:\n%s", logs)
}

// processesWithFile counts processes that have path open (Linux /proc).
func processesWithFile(t *testing.T, path string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	seen := map[string]bool{}
	for _, fd := range procs {
		if target, err := os.Readlink(fd); err == nil && target == path {
			seen[strings.Split(fd, "/")[2]] = true
		}
	}
	return len(seen)
}

// TestDaemonSpawnStorm: 16 clients at once against a home with no daemon,
// each spawning (the test binary as the daemon process).
func TestDaemonSpawnStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	helperSpawn(t)
	home := t.TempDir()
	storm(t, home, "hook", 16, func(reply string) error {
		if !strings.HasPrefix(reply, "hook:") {
			return fmt.Errorf("reply %q", reply)
		}
		return nil
	})
}

// TestDaemonFirstCall measures the first call when no daemon runs (spawn,
// recovery, ready) and the next, warm one.
func TestDaemonFirstCall(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	helperSpawn(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = clientOf(home).Stop(context.Background(), 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	if _, err := clientOf(home).callDaemon(ctx, "hook", []byte("x"), true, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	cold := time.Since(t0)
	t0 = time.Now()
	if _, err := clientOf(home).callDaemon(ctx, "hook", []byte("x"), true, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("first call (spawn) %s, warm call (dial + call) %s", cold, time.Since(t0))
	logs, _ := os.ReadFile(filepath.Join(home, "daemon.log"))
	t.Logf("daemon.log:\n%s", logs)
}

// TestDaemonBinaryStorm runs the storm against the real omni binary.
func TestDaemonBinaryStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the omni binary")
	}
	bin := testbin.Omni(t)
	useSpawn(t, bin, nil, "daemon")
	// The client is this test binary, the daemon cmd/omni: another build.
	testAnyBuild = true
	t.Cleanup(func() { testAnyBuild = false })

	// First call with no daemon (spawn + store creation + ready), then a warm one.
	first := t.TempDir()
	t.Cleanup(func() { _, _ = clientOf(first).Stop(context.Background(), 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	if _, err := clientOf(first).callDaemon(ctx, "ping", nil, true, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	cold := time.Since(t0)
	t0 = time.Now()
	if _, err := clientOf(first).callDaemon(ctx, "ping", nil, true, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	logs, _ := os.ReadFile(filepath.Join(first, "daemon.log"))
	t.Logf("omni binary: first call (spawn) %s, warm call %s; daemon.log:\n%s", cold, time.Since(t0), logs)
	if _, err := clientOf(first).Stop(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	storm(t, home, "ping", 16, func(reply string) error {
		if reply != pong {
			return fmt.Errorf("reply %q", reply)
		}
		return nil
	})
}

// helperSpawn makes callDaemon spawn the test binary as the daemon.
func helperSpawn(t *testing.T) {
	useSpawn(t, os.Args[0], []string{"OMNI_DAEMON_HELPER=1"}, "-test.run=^TestDaemonHelperProcess$")
}

// TestDaemonRespawnWhileStopping: a client arrives while the old daemon is
// still shutting down (address removed, lock still held). Its first spawn
// loses the lock; it spawns again once the lock is free (the old daemon removed
// daemon.addr first, so the client does not dial a daemon that is leaving).
func TestDaemonRespawnWhileStopping(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	helperSpawn(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = clientOf(home).Stop(context.Background(), 5*time.Second) })
	old := startDaemon(t, home, time.Minute, &fakeDaemon{closeDelay: 300 * time.Millisecond})
	if got, err := callT(t, home, "stop", ""); err != nil || got != "stopping" {
		t.Fatalf("stop = %q, %v", got, err)
	}
	// The case is a client that arrives once the address is gone and the
	// lock still held; before that (a loaded machine) the leaving daemon
	// still answers, which is not this case.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(home, "daemon.addr")); errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := clientOf(home).callDaemon(ctx, "hook", []byte("again"), true, 5*time.Second)
	if err != nil || string(got) != "hook:again" {
		logs, _ := os.ReadFile(filepath.Join(home, "daemon.log"))
		t.Fatalf("call during shutdown = %q, %v\ndaemon.log:\n%s", got, err, logs)
	}
	waitDone(t, old, 5*time.Second)
	logs, _ := os.ReadFile(filepath.Join(home, "daemon.log"))
	t.Logf("daemon.log:\n%s", logs)
	ad, err := wire.ReadAddr(home)
	if err != nil || ad.PID == os.Getpid() {
		t.Fatalf("new daemon addr = %+v, %v; want a spawned process", ad, err)
	}
}

// TestDaemonCrashRecovery: a daemon killed with SIGKILL leaves a stale
// daemon.addr; the next client spawns a new daemon on the same store.
func TestDaemonCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	helperSpawn(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = clientOf(home).Stop(context.Background(), 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for want := 1; want <= 2; want++ {
		got, err := clientOf(home).callDaemon(ctx, "stats", nil, true, 10*time.Second)
		if err != nil || string(got) != fmt.Sprint(want) {
			t.Fatalf("stats = %q, %v; want %d", got, err, want)
		}
		ad, err := wire.ReadAddr(home)
		if err != nil {
			t.Fatal(err)
		}
		if want == 1 {
			if err := platform.Kill(ad.PID); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 500; i++ { // the kernel releases the lock when the process is gone
				if locked, _ := jetstream.Locked(storeDir(home)); !locked {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
}

// TestMain removes the one build of omni the package's tests share.
func TestMain(m *testing.M) {
	code := sharedtest.Main(m)
	testbin.Cleanup()
	os.Exit(code)
}

// TestDaemonHealsForgedAddr: a daemon.addr that names another daemon while
// this one holds the store's lock (stale, or written by hand) is written
// again within a home check, so hooks reach the daemon instead of waiting
// out their deadline until it idles out. Red when only a missing or
// unreadable address is healed.
func TestDaemonHealsForgedAddr(t *testing.T) {
	old := homeCheck
	homeCheck = 50 * time.Millisecond
	t.Cleanup(func() { homeCheck = old })
	home := t.TempDir()
	startDaemon(t, home, time.Minute, &fakeDaemon{})
	ours, err := wire.ReadAddr(home)
	if err != nil {
		t.Fatal(err)
	}
	forged := ours
	forged.Token, forged.PID, forged.Addr = strings.Repeat("ab", 16), 1, "127.0.0.1:1"
	if err := writeAddr(home, forged); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		cur, err := wire.ReadAddr(home)
		if err == nil && cur.Token == ours.Token && cur.Addr == ours.Addr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon.addr still names %+v (err %v)", cur, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := callT(t, home, "hook", "x"); err != nil {
		t.Fatalf("call after the heal: %v", err)
	}
}

// TestReadOnlyHome: a home this user cannot write is refused at once with
// ErrReadOnlyHome (not a store start that times out and reads as damage).
// Root writes anywhere, so the test needs another user.
func TestReadOnlyHome(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write a read-only directory")
	}
	home := t.TempDir()
	if err := os.MkdirAll(storeDir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(storeDir(home), 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(storeDir(home), 0o700) })
	if err := CheckHome(home); !errors.Is(err, ErrReadOnlyHome) {
		t.Fatalf("CheckHome = %v, want ErrReadOnlyHome", err)
	}
}
