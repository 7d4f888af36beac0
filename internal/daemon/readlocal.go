package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
)

// OpenReadLocal opens the store of cfg.Home in this process for a command
// that only reads its log (omni bench --store), when no daemon or other
// command holds it: no request crosses a process, and nothing is
// appended. It returns the log, the loader of the home's base snapshot
// (omni gc) and the function that closes the store. Errors:
// jetstream.ErrLocked (wrapped) when the store lock is held (read through
// the daemon then), fs.ErrNotExist (wrapped) when the home has no store,
// the store's.
func OpenReadLocal(ctx context.Context, cfg Config) (events.Log, hooks.BaseLoader, func() error, error) {
	if cfg.ClusterErr != nil {
		return nil, nil, nil, cfg.ClusterErr
	}
	if _, err := os.Stat(storeDir(cfg.Home)); err != nil {
		return nil, nil, nil, fmt.Errorf("no store in %s: %w", cfg.Home, fs.ErrNotExist)
	}
	o := cfg.storeOptions()
	o.LockWait = 0
	st, err := jetstream.Open(ctx, o)
	if err != nil {
		return nil, nil, nil, err
	}
	return st, baseLoader(cfg.Home), st.Close, nil
}
