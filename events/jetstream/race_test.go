package jetstream

import (
	"context"
	"sync"
	"testing"

	"github.com/omnictx/omni/events/jetstream/jstest"
)

// TestConcurrentOpenOnEmptyCluster: daemons of several machines started
// at once on a cluster without the stream all open it (one creates it,
// the others find it), whatever the order of their requests.
func TestConcurrentOpenOnEmptyCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster")
	}
	for _, n := range []int{1, 3} {
		c := jstest.Start(t, n)
		for round := 0; round < 2; round++ {
			name := "RACE" + string(rune('A'+round))
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					st, err := Open(context.Background(), Options{URL: c.URL(), Remote: Remote{Stream: name}})
					if err == nil {
						st.Close()
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s: store %d: %v", name, i, err)
				}
			}
		}
	}
}
