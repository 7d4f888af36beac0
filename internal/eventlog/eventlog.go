// Package eventlog is the event log for people and tools (omni log): the
// stored events in stream order, filtered by session, kind, time and
// sequence, read one bounded page at a time (ReadPage, which the daemon
// serves) and printed one per line (Print), as JSON with the compressed
// inputs and archived blocks decoded to text, or as a short summary.
// It prints what the store holds: the log holds redacted text only.
package eventlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omnictx/omni/events"
)

// Kinds lists every event kind a Query may name, in the order of events.
var Kinds = []events.Kind{
	events.KindInvoked, events.KindEmitted, events.KindFolded, events.KindArchived,
	events.KindCompacted, events.KindRetrieved, events.KindReaderStarted,
	events.KindSessionEnded, events.KindDistilled, events.KindGoalSet,
	events.KindRemembered, events.KindPruned, events.KindLost, events.KindForgotten,
}

// Query selects events. The zero Query selects every event.
type Query struct {
	// Session keeps the events of this host session id only ("": all).
	Session string `json:"session,omitempty"`
	// Kinds keeps the events of these kinds only (empty: all).
	Kinds []events.Kind `json:"kinds,omitempty"`
	// Since keeps the events at or after this time (zero: all).
	Since time.Time `json:"since,omitzero"`
	// From and To bound the batches' sequences, both inclusive (0: open).
	From events.Seq `json:"from,omitempty"`
	To   events.Seq `json:"to,omitempty"`
}

// Match reports whether e passes the query's session, kind and time
// filters (From and To bound the read, not the match).
func (q Query) Match(e events.Event) bool {
	if q.Session != "" && e.Session != q.Session {
		return false
	}
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, e.Kind) {
		return false
	}
	if !q.Since.IsZero() && e.Time.Before(q.Since) {
		return false
	}
	return true
}

// NewQuery builds the Query of omni log's flags: session, kinds (see
// ParseKinds), since (zero: no bound) and seq (ParseSeqRange); empty
// strings filter nothing. Errors: the parsers', naming the flag.
func NewQuery(session string, kinds []string, since time.Time, seq string) (Query, error) {
	q := Query{Session: session, Since: since}
	var err error
	if q.Kinds, err = ParseKinds(kinds); err != nil {
		return q, err
	}
	if seq != "" {
		if q.From, q.To, err = ParseSeqRange(seq); err != nil {
			return q, err
		}
	}
	return q, nil
}

// ParseKinds reads a comma-separated list of kinds ("invoked,archived").
// Errors: an unknown kind, naming the known ones.
func ParseKinds(list []string) ([]events.Kind, error) {
	var out []events.Kind
	for _, s := range list {
		for _, k := range strings.Split(s, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			if !slices.Contains(Kinds, events.Kind(k)) {
				names := make([]string, len(Kinds))
				for i, k := range Kinds {
					names[i] = string(k)
				}
				return nil, fmt.Errorf("--kind %q: want one of %s", k, strings.Join(names, ", "))
			}
			out = append(out, events.Kind(k))
		}
	}
	return out, nil
}

// ParseSeqRange reads "A..B", "A..", "..B" or "A" (one batch) into
// inclusive bounds, 0 for an open side. Errors: anything else, or A > B.
func ParseSeqRange(s string) (from, to events.Seq, err error) {
	num := func(v string) (events.Seq, error) {
		if v == "" {
			return 0, nil
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("--seq %q: want A..B, A.., ..B or A, with sequences from 1", s)
		}
		return events.Seq(n), nil
	}
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "..")
	if from, err = num(a); err != nil {
		return 0, 0, err
	}
	if !isRange {
		if from == 0 {
			return 0, 0, fmt.Errorf("--seq %q: want A..B, A.., ..B or A, with sequences from 1", s)
		}
		return from, from, nil
	}
	if to, err = num(b); err != nil {
		return 0, 0, err
	}
	if from != 0 && to != 0 && from > to {
		return 0, 0, fmt.Errorf("--seq %q: %d is after %d", s, from, to)
	}
	return from, to, nil
}

// Entry is one event with its place in the log: the sequence of its batch
// and its index in the batch (the event's own Seq and Index are not
// encoded).
type Entry struct {
	Seq   events.Seq `json:"seq"`
	Index int        `json:"index"`
	events.Event
}

// Page is one bounded read of the log.
type Page struct {
	// Entries are the matching events, in (Seq, Index) order.
	Entries []Entry `json:"entries,omitempty"`
	// Next is the sequence the next read starts from.
	Next events.Seq `json:"next"`
	// Last is the log's newest sequence when the page was read (0: empty).
	Last events.Seq `json:"last"`
}

// Done reports whether the page reached the end of the log (as it was
// when read) or the query's upper bound.
func (p Page) Done(q Query) bool {
	return p.Next > p.Last || (q.To != 0 && p.Next > q.To)
}

// PageBytes is the default budget of one page, in bytes of stored payload
// (ReadPage): well under the daemon's 32 MiB reply limit even with the
// JSON's base64 (4/3), so a page never needs a second round trip.
const PageBytes = 4 << 20

// errFull stops a Read at a batch boundary once a page is full.
var errFull = errors.New("page full")

// ReadPage reads the batches of log from max(from, q.From) on, up to q.To
// and up to the log's newest batch, keeping the events q matches, and
// stops at the first batch boundary past maxBytes of kept payload (an
// estimate: the stored bytes plus 256 per event; at least one batch is
// read; maxBytes <= 0 means PageBytes). Batches removed by omni gc are
// skipped. Errors: the log's, wrapped.
func ReadPage(ctx context.Context, log events.Log, q Query, from events.Seq, maxBytes int) (Page, error) {
	if maxBytes <= 0 {
		maxBytes = PageBytes
	}
	last, err := log.Last(ctx)
	if err != nil {
		return Page{}, fmt.Errorf("log: %w", err)
	}
	from = max(from, q.From, 1)
	p := Page{Last: last, Next: from}
	if from > last || (q.To != 0 && from > q.To) {
		return p, nil
	}
	size := 0
	var cur events.Seq
	err = log.Read(ctx, from, func(e events.Event) error {
		if e.Seq != cur {
			if (q.To != 0 && e.Seq > q.To) || (cur != 0 && size >= maxBytes) {
				return errFull
			}
			cur = e.Seq
			p.Next = cur + 1
		}
		if q.Match(e) {
			p.Entries = append(p.Entries, Entry{Seq: e.Seq, Index: e.Index, Event: e})
			size += payloadBytes(e)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return Page{}, fmt.Errorf("read log from %d: %w", from, err)
	}
	if err == nil {
		p.Next = max(p.Next, last+1)
		if q.To != 0 {
			p.Next = min(p.Next, q.To+1)
		}
		p.Last = max(p.Last, p.Next-1)
	}
	return p, nil
}

// payloadBytes estimates the stored size of e: its byte fields and 256
// bytes for the rest.
func payloadBytes(e events.Event) int {
	n := 256
	if e.Invoked != nil {
		n += len(e.Invoked.Input)
		for k, v := range e.Invoked.Params {
			n += len(k) + len(v)
		}
	}
	if e.Archived != nil {
		n += len(e.Archived.Data)
	}
	if e.Emitted != nil {
		n += 8*len(e.Emitted.Lines) + len(e.Emitted.Source)
	}
	return n
}
