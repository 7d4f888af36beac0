package hooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/pipeline"
)

// doorStep is one door's part of the commit step (commit): how it decides
// a delivery under its host's caps and what it prints.
type doorStep struct {
	// decide runs the pipeline for d and decides again under the door's
	// host caps (it may change d: a cap makes it unrecorded or unshown).
	decide func(d *delivery) (pipeline.Decision, []events.Event)
	// print returns the bytes the door prints for a decision (nil: the
	// host keeps its own) and whether the door changed the text by its
	// redaction alone (Emitted.Replied then holds even when nothing folded).
	print func(dec pipeline.Decision) (out []byte, redactedReply bool, err error)
	// cut reports whether a decision changes what the reader gets: only
	// then can a failed append fall back to an unchanged delivery.
	cut func(dec pipeline.Decision) bool
	// unchanged is what the door prints when it delivers the text as it
	// arrived (the archive-failed fallback).
	unchanged []byte
}

// commit is the one commit step of every door (hook, exec, pipe, distill,
// and their reruns): decide, stamp the decision time, append the batch
// (Invoked then the decision's events) and fold it. On a shared log an
// append that another writer preceded is decided again with their batches
// folded (at most maxRedecide rounds). When the append fails and the
// decision cut something, the archive could not be written: the plain
// delivery (nofold=archive-failed) is recorded instead and fellBack is
// true. Errors: the append's, wrapped, or the door's print error.
func (e *Engine) commit(ctx context.Context, inv *events.Event, d *delivery, t0 time.Time, s doorStep) (dec pipeline.Decision, evs []events.Event, out []byte, fellBack bool, err error) {
	for round := 0; ; round++ {
		dec, evs = s.decide(d)
		var redacted bool
		if out, redacted, err = s.print(dec); err != nil {
			return dec, evs, nil, false, fmt.Errorf("render reply: %w", err)
		}
		em := evs[len(evs)-1].Emitted
		em.Output = sha(out)
		if redacted {
			em.Replied = true // the door changed the text: redaction
		}
		e.stamp(evs, t0)
		// On a shared log, another machine may append first: decide again
		// with its batches folded (appendDecision).
		if err = e.appendDecision(ctx, inv, evs); !errors.Is(err, errStale) || round == maxRedecide {
			break
		}
	}
	if err == nil {
		return dec, evs, out, false, nil
	}
	if !s.cut(dec) || errors.Is(err, errStale) {
		return dec, evs, nil, false, fmt.Errorf("append: %w", err)
	}
	// Archive first: the archive could not be written, so nothing is cut.
	// Record the plain delivery if the store takes it.
	e.opt.Logf("%s: append with archive: %v; delivering unchanged", inv.Invoked.Door, err)
	inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamNoFold), string(events.ReasonArchiveFailed))
	d.req.NoFold = string(events.ReasonArchiveFailed)
	dec, evs = e.decide(*d, inv.ID)
	evs[len(evs)-1].Emitted.Output = sha(s.unchanged)
	if err2 := e.appendDecision(ctx, inv, evs); err2 != nil {
		return dec, evs, nil, false, fmt.Errorf("append: %w", err2)
	}
	return dec, evs, s.unchanged, true, nil
}

// committed fills a door's Result from the decision commit recorded: the
// delivered text, the folds, the reasons and the stages' report.
func (r *Result) committed(dec pipeline.Decision, evs []events.Event) {
	r.Recorded = true
	r.Delivered = dec.Text
	r.Folds = dec.Folds
	r.Reason = dec.Reason
	r.Distiller, r.ShortenReason = distilledOf(evs)
	r.RepeatBytes = dec.RepeatBytes
}
