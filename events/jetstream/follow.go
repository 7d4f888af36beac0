package jetstream

import (
	"context"
	"fmt"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/omnictx/omni/events"
)

// Follow delivers to fn, in log order and from one goroutine, every batch
// from sequence from on (0 means 1), those appended later by any writer
// included, until the returned stop is called. It rides an ordered
// consumer, which the client recreates after a reconnection or a missed
// heartbeat from the last batch it delivered, so a cluster that restarts
// resumes the flow. A batch that does not decode is reported through bad
// (if not nil) and skipped. Errors: events.ErrClosed, or the consumer
// could not be created.
func (st *Store) Follow(ctx context.Context, from events.Seq, fn func([]events.Event), bad func(seq events.Seq, err error)) (stop func(), err error) {
	if st.isClosed() {
		return nil, events.ErrClosed
	}
	cctx, cancel := opContext(ctx)
	defer cancel()
	cons, err := st.stream.OrderedConsumer(cctx, js.OrderedConsumerConfig{
		DeliverPolicy: js.DeliverByStartSequencePolicy, OptStartSeq: uint64(max(from, 1))})
	if err != nil {
		return nil, fmt.Errorf("follow from %d: %w", from, st.mapErr(err))
	}
	cc, err := cons.Consume(func(m js.Msg) {
		md, err := m.Metadata()
		if err != nil {
			return
		}
		seq := events.Seq(md.Sequence.Stream)
		evs, err := st.decode(m.Data(), seq, m.Subject())
		if err != nil {
			if bad != nil {
				bad(seq, err)
			}
			return
		}
		fn(evs)
	})
	if err != nil {
		return nil, fmt.Errorf("follow from %d: %w", from, st.mapErr(err))
	}
	return cc.Stop, nil
}
