package hooks

import (
	"context"
	"time"
)

// Timing is where one hook call's time went, for omni bench --latency:
// Redact is the redaction stage over the payload, Append the log's append
// of the call's batches with their fold into the projections, Decide the
// rest of the call (parsing, the distillers and collapse, the ledger's
// decision, the reply).
type Timing struct {
	Redact, Decide, Append time.Duration
}

type timingKey struct{}

// WithTiming returns ctx carrying t: a Hook or HookResult called with it
// fills t. Timing costs a few clock reads per call.
func WithTiming(ctx context.Context, t *Timing) context.Context {
	return context.WithValue(ctx, timingKey{}, t)
}

// timingOf returns the Timing ctx carries, nil when none.
func timingOf(ctx context.Context) *Timing {
	t, _ := ctx.Value(timingKey{}).(*Timing)
	return t
}
