package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/omnictx/omni/internal/daemon/wire"
)

// DaemonState is the answer of Probe: what the daemon of a home is doing
// and, when it cannot serve, the fix that works.
type DaemonState struct {
	// State is one of "none" (no address file), "answers", "hung" (no
	// answer within the probe's time), "token refused", "untrusted" (the
	// listener did not prove the daemon's certificate), "other protocol",
	// "other build", "other backend" (it serves another log than the
	// cluster settings now name: started before they changed), "unsafe
	// home".
	State string `json:"state"`
	// PID, Version and Build are the address file's.
	PID     int    `json:"pid,omitempty"`
	Version string `json:"version,omitempty"`
	Build   string `json:"build,omitempty"`
	// Detail is the error or mismatch behind State; Fix the command that
	// repairs it ("" when nothing is wrong).
	Detail string `json:"detail,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Backoff is the standing back-off's reason, "" when none stands.
	Backoff string `json:"backoff,omitempty"`
}

// Probe asks the daemon of home who it is within wait (0 means 1 s): it
// reads the address file (CheckPrivate), dials with the pinned
// certificate and pings, and compares its build with this binary's
// (staleBuild) and its backend with the home's cluster settings as this
// process reads them (wire.ReadCluster). It sends nothing but ping and never spawns, stops or
// replaces a daemon.
func Probe(ctx context.Context, home string, wait time.Duration) DaemonState {
	if wait <= 0 {
		wait = probeTimeout
	}
	var ds DaemonState
	if b, on := wire.ReadBackoff(home); on && b.Hard {
		ds.Backoff = b.Why
	}
	ad, err := wire.ReadAddr(home)
	switch {
	case errors.Is(err, wire.ErrUnsafeHome):
		ds.State, ds.Detail = "unsafe home", err.Error()
		return ds
	case errors.Is(err, os.ErrNotExist):
		ds.State = "none"
		return ds
	case err != nil:
		ds.State, ds.Detail = "untrusted", err.Error()
		ds.Fix = fmt.Sprintf("remove %s (the next hook starts a daemon)", filepath.Join(home, wire.AddrFile))
		return ds
	}
	ds.PID, ds.Version, ds.Build = ad.PID, ad.Version, ad.Build
	if ad.Protocol != wire.Protocol {
		ds.State = "other protocol"
		ds.Detail = fmt.Sprintf("it speaks protocol %d, this binary %d", ad.Protocol, wire.Protocol)
		ds.Fix = "run 'omni daemon --stop' (it stops it by its pid; the next hook starts this build)"
		return ds
	}
	pctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	conn, err := wire.Dial(pctx, ad, wait)
	if err == nil {
		_, err = conn.Call(pctx, MethodPing, nil)
		conn.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: no answer to ping within %s", wire.ErrUnhealthy, wait)
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, wire.ErrTokenRefused):
		ds.State, ds.Detail = "token refused", err.Error()
		ds.Fix = "run 'omni daemon --stop' (it stops the daemon by its pid; the next hook starts a new one)"
		return ds
	case errors.Is(err, wire.ErrUnhealthy):
		ds.State, ds.Detail = "hung", err.Error()
		ds.Fix = "run 'omni daemon --stop' (it kills a hung daemon of this home by its pid; the next hook starts a new one)"
		return ds
	case errors.Is(err, wire.ErrUntrusted):
		ds.State, ds.Detail = "untrusted", err.Error()
		ds.Fix = fmt.Sprintf("remove %s: a process that is not this home's daemon listens on %s (the next hook starts a daemon)", filepath.Join(home, wire.AddrFile), ad.Addr)
		return ds
	default:
		ds.State, ds.Detail = "none", err.Error()
		return ds
	}
	if why := staleBuild(ad); why != "" {
		ds.State, ds.Detail = "other build", why
		ds.Fix = "run 'omni daemon --stop' or any hook: the next call replaces it with this build"
		return ds
	}
	if want, err := wire.ReadCluster(home, os.LookupEnv); err == nil {
		if why := ad.BackendMismatch(want.Backend()); why != "" {
			ds.State, ds.Detail = "other backend", why
			ds.Fix = "run 'omni daemon --stop' or any hook: the next call replaces it with a daemon on the configured backend"
			return ds
		}
	}
	ds.State = "answers"
	return ds
}
