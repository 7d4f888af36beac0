package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/platform"
)

// TestLockHolderPortable: the holder of a store's lock is found through
// the pid the store records beside its lock, as on macOS and Windows
// (platform.Portable: no /proc), while it holds the store, and no one once
// it closed it.
func TestLockHolderPortable(t *testing.T) {
	defer platform.Use(platform.Portable())()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := jetstream.Open(ctx, jetstream.Options{Dir: dir, LockWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if pid, _ := LockHolder(dir); pid != os.Getpid() {
		t.Fatalf("LockHolder = %d while this process holds the store, want %d", pid, os.Getpid())
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if pid, _ := LockHolder(dir); pid != 0 {
		t.Fatalf("LockHolder = %d after the store closed", pid)
	}
}
