package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/platform"
)

const (
	// probeTimeout bounds the health probe of a suspect daemon (dial and
	// ping): a daemon answers ping from its own goroutine within
	// milliseconds even while its Engine works on a large hook, so a
	// second of silence means it is stopped, deadlocked or not ours.
	probeTimeout = time.Second
	// termGrace is how long a daemon that answers but cannot be used (it
	// refuses the token in its address file, or speaks another protocol)
	// gets after SIGTERM to shut down cleanly before SIGKILL.
	termGrace = 2 * time.Second
	// releaseWait bounds the wait for the store lock after a stop signal.
	releaseWait = 3 * time.Second
	// ReplaceEnv, set to 1 in a spawned daemon's environment, makes it
	// first judge the daemon a back-off names (Config.Replace).
	ReplaceEnv = wire.ReplaceEnv
)

// Verdict is what ResolveSuspect found.
type Verdict string

// The verdicts of ResolveSuspect.
const (
	VerdictNone      Verdict = "no daemon address"
	VerdictHealthy   Verdict = "the daemon answers"
	VerdictRetired   Verdict = "the address was retired (its listener is not this home's daemon)"
	VerdictStopped   Verdict = "the daemon was stopped"
	VerdictKilled    Verdict = "the hung daemon was killed"
	VerdictUntouched Verdict = "the daemon does not answer but could not be verified as ours; left running"
)

// ResolveSuspect judges the daemon that home's address file names and
// makes way for a new one when it cannot serve: it probes it (TLS against
// the pinned certificate and ping, within probeTimeout). A daemon that
// answers ends the back-off. A listener that does not prove the
// certificate has its address retired. A daemon that does not answer, or
// refuses the token, is stopped when it is verified ours (the process
// named by the address holds this home's store lock: LockHolder): SIGKILL
// when it did not answer in time (a stopped or deadlocked process cannot
// shut down cleanly), SIGTERM and SIGKILL after termGrace when it answered
// wrongly; then its address is retired and the lock awaited. It never
// signals this process or a process that does not hold the lock. Errors:
// only a lock that stays held after a kill.
func ResolveSuspect(ctx context.Context, home string, logf func(string, ...any)) (Verdict, error) {
	ad, err := wire.ReadAddr(home)
	if err != nil {
		return VerdictNone, nil
	}
	var perr error
	if ad.Protocol == wire.Protocol {
		// A stopped process gets one probe; one that runs gets three in a
		// row before it counts as hung, so a loaded machine does not cost
		// a healthy daemon its life.
		var err error
		for try := 0; try < 3; try++ {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			var conn *wire.Conn
			conn, err = wire.Dial(pctx, ad, probeTimeout)
			if err == nil {
				_, err = conn.Call(pctx, MethodPing, nil)
				conn.Close()
			}
			cancel()
			if err == nil || errors.Is(err, wire.ErrTokenRefused) || errors.Is(err, wire.ErrUntrusted) ||
				errors.Is(err, wire.ErrNoDaemon) || wire.Stopped(ad.PID) || ctx.Err() != nil {
				break
			}
		}
		if err == nil {
			wire.EndBackoff(home)
			return VerdictHealthy, nil
		}
		if errors.Is(err, wire.ErrUntrusted) || errors.Is(err, wire.ErrNoDaemon) {
			wire.RetireAddr(home, ad.Token)
			logf("daemon address %s retired: %v", ad.Addr, err)
			return VerdictRetired, nil
		}
		perr = err
	} else {
		// Another protocol: no certificate to prove it, so nothing is sent;
		// its process is judged by the store lock alone.
		perr = fmt.Errorf("daemon pid %d speaks protocol %d, want %d", ad.PID, ad.Protocol, wire.Protocol)
	}
	holder, _ := LockHolder(storeDir(home))
	if holder == 0 || holder != ad.PID || holder == os.Getpid() {
		if holder == 0 {
			// No one holds the store: the address is stale.
			wire.RetireAddr(home, ad.Token)
			return VerdictRetired, nil
		}
		logf("daemon pid %d cannot serve (%v) but pid %d holds the store lock: left alone", ad.PID, perr, holder)
		return VerdictUntouched, nil
	}
	verdict := VerdictStopped
	if errors.Is(perr, wire.ErrTokenRefused) || ad.Protocol != wire.Protocol {
		logf("daemon pid %d cannot serve (%v): SIGTERM", ad.PID, perr)
		_ = platform.Terminate(ad.PID)
		if !waitUnlocked(ctx, home, termGrace) {
			logf("daemon pid %d still holds the store after %s: SIGKILL", ad.PID, termGrace)
			_ = platform.Kill(ad.PID)
		}
	} else {
		verdict = VerdictKilled
		logf("daemon pid %d does not answer within %s (%v): SIGKILL", ad.PID, probeTimeout, perr)
		_ = platform.Kill(ad.PID)
	}
	wire.RetireAddr(home, ad.Token)
	if !waitUnlocked(ctx, home, releaseWait) {
		return verdict, fmt.Errorf("replace daemon pid %d: store %s still locked after %s", ad.PID, storeDir(home), releaseWait)
	}
	return verdict, nil
}

// waitUnlocked polls home's store lock every 5 ms until it is free or
// wait passes, and reports whether it is free.
func waitUnlocked(ctx context.Context, home string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if locked, err := jetstream.Locked(storeDir(home)); err == nil && !locked {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// LockHolder returns the process that holds the store lock of dir (a
// store directory), or 0 when none does or it cannot tell
// (platform.LockHolder: /proc/locks on Linux; elsewhere the pid the
// holder recorded beside the lock, while the lock is held).
func LockHolder(dir string) (int, error) {
	return platform.LockHolder(filepath.Join(dir, jetstream.LockFile)), nil
}
