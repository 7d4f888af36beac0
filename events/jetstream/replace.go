package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/omnictx/omni/events"
)

// ReplacedSuffix names the side stream that holds replaced batches: the
// log's stream name plus this suffix. A batch replaced in place (omni
// forget) is one message of it, on the subject "omni.replaced[.<name>].<seq>"
// (the newest of a subject counts; Replace erases the older ones); the log's own message at seq is erased
// (secure delete: overwritten with random data on disk), so the log's
// sequences never change.
const ReplacedSuffix = "_REPLACED"

// replacedPrefix is the subject prefix of the side stream's messages.
func (st *Store) replacedPrefix() string {
	return "omni.replaced" + strings.TrimPrefix(st.subject, Subject)
}

// replacedSet is the sorted set of replaced sequences.
type replacedSet struct {
	mu   sync.Mutex
	seqs []events.Seq
	side js.Stream // nil until the side stream exists
}

// has reports whether seq was replaced.
func (r *replacedSet) has(seq events.Seq) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := slices.BinarySearch(r.seqs, seq)
	return ok
}

// in returns the replaced sequences in [from, to).
func (r *replacedSet) in(from, to events.Seq) []events.Seq {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, _ := slices.BinarySearch(r.seqs, from)
	j, _ := slices.BinarySearch(r.seqs, to)
	return slices.Clone(r.seqs[i:j])
}

// min returns the smallest replaced sequence, 0 when none.
func (r *replacedSet) min() events.Seq {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seqs) == 0 {
		return 0
	}
	return r.seqs[0]
}

func (r *replacedSet) add(seq events.Seq) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := slices.BinarySearch(r.seqs, seq); !ok {
		r.seqs = slices.Insert(r.seqs, i, seq)
	}
}

// loadReplaced finds the side stream, if any, and the sequences it holds
// (one stream-info call with a subject filter).
func (st *Store) loadReplaced(ctx context.Context) error {
	ctx, cancel := opContext(ctx)
	defer cancel()
	side, err := st.js.Stream(ctx, st.name+ReplacedSuffix)
	if errors.Is(err, js.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", st.name+ReplacedSuffix, err)
	}
	info, err := side.Info(ctx, js.WithSubjectFilter(st.replacedPrefix()+".*"))
	if err != nil {
		return fmt.Errorf("stream %s: %w", st.name+ReplacedSuffix, err)
	}
	st.replaced.mu.Lock()
	defer st.replaced.mu.Unlock()
	st.replaced.side = side
	st.replaced.seqs = st.replaced.seqs[:0]
	for subj := range info.State.Subjects {
		q, err := strconv.ParseUint(subj[strings.LastIndexByte(subj, '.')+1:], 10, 64)
		if err == nil {
			st.replaced.seqs = append(st.replaced.seqs, events.Seq(q))
		}
	}
	slices.Sort(st.replaced.seqs)
	return nil
}

var _ events.Rewriter = (*Store)(nil)

// ErrShared: a batch of a log on a cluster cannot be replaced (every
// machine folds it).
var ErrShared = errors.New("the log is a shared stream on a cluster: its batches cannot be rewritten")

// Replace stores batch in place of the batch at seq (events.Rewriter): the
// new batch goes to the side stream (ReplacedSuffix), then the log's
// message at seq, or an earlier replacement, is securely deleted (its
// bytes overwritten on disk). Read and Get return the new batch at seq.
// Errors: events.ErrNotFound when no batch is at seq, ErrShared on a
// cluster, the stream's otherwise (wrapped).
func (st *Store) Replace(ctx context.Context, seq events.Seq, batch []events.Event) error {
	if st.remote != nil {
		return ErrShared
	}
	if _, err := st.Get(ctx, seq); err != nil {
		return err
	}
	data, err := events.Encode(batch)
	if err != nil {
		return err
	}
	ctx, cancel := opContext(ctx)
	defer cancel()
	side, err := st.sideStream(ctx)
	if err != nil {
		return err
	}
	subj := st.replacedPrefix() + "." + strconv.FormatUint(uint64(seq), 10)
	var old uint64
	if m, err := side.GetLastMsgForSubject(ctx, subj); err == nil {
		old = m.Sequence
	} else if !errors.Is(err, js.ErrMsgNotFound) {
		return fmt.Errorf("replace %d: %w", seq, st.mapErr(err))
	}
	if _, err := st.js.Publish(ctx, subj, data, js.WithExpectStream(st.name+ReplacedSuffix)); err != nil {
		return fmt.Errorf("replace %d: %w", seq, st.mapErr(err))
	}
	if old != 0 {
		if err := side.SecureDeleteMsg(ctx, old); err != nil && !gone(err) {
			return fmt.Errorf("replace %d: erase the earlier copy: %w", seq, st.mapErr(err))
		}
	}
	if err := st.stream.SecureDeleteMsg(ctx, uint64(seq)); err != nil && !gone(err) {
		return fmt.Errorf("replace %d: erase the batch: %w", seq, st.mapErr(err))
	}
	st.replaced.add(seq)
	return nil
}

// errNoSequence is JetStream's error code for a delete of a sequence the
// stream does not hold.
const errNoSequence js.ErrorCode = 10043

// gone reports whether a delete failed because the message is not there
// (nats.go flattens the API error of a failed delete into text).
func gone(err error) bool {
	return errors.Is(err, js.ErrMsgNotFound) ||
		strings.Contains(err.Error(), fmt.Sprintf("err_code=%d", errNoSequence))
}

// sideStream returns the side stream, creating it on first use.
func (st *Store) sideStream(ctx context.Context) (js.Stream, error) {
	st.replaced.mu.Lock()
	side := st.replaced.side
	st.replaced.mu.Unlock()
	if side != nil {
		return side, nil
	}
	side, err := st.js.CreateOrUpdateStream(ctx, js.StreamConfig{
		Name:        st.name + ReplacedSuffix,
		Subjects:    []string{st.replacedPrefix() + ".*"},
		Storage:     js.FileStorage,
		Retention:   js.LimitsPolicy,
		AllowDirect: true,
		Compression: js.NoCompression,
		Replicas:    1,
	})
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", st.name+ReplacedSuffix, st.mapErr(err))
	}
	st.replaced.mu.Lock()
	st.replaced.side = side
	st.replaced.mu.Unlock()
	return side, nil
}

// purgeReplaced removes the replacements of the batches below before.
func (st *Store) purgeReplaced(ctx context.Context, before events.Seq) error {
	qs := st.replaced.in(0, before)
	if len(qs) == 0 {
		return nil
	}
	st.replaced.mu.Lock()
	side := st.replaced.side
	st.replaced.mu.Unlock()
	for _, q := range qs {
		subj := st.replacedPrefix() + "." + strconv.FormatUint(uint64(q), 10)
		// Overwrite the copy's bytes first, as Purge does for the log's.
		if m, err := side.GetLastMsgForSubject(ctx, subj); err == nil {
			if err := side.SecureDeleteMsg(ctx, m.Sequence); err != nil && !gone(err) {
				return fmt.Errorf("overwrite replaced %d: %w", q, st.mapErr(err))
			}
		}
		if err := side.Purge(ctx, js.WithPurgeSubject(subj)); err != nil {
			return fmt.Errorf("purge replaced %d: %w", q, st.mapErr(err))
		}
	}
	st.replaced.mu.Lock()
	defer st.replaced.mu.Unlock()
	i, _ := slices.BinarySearch(st.replaced.seqs, before)
	st.replaced.seqs = slices.Delete(st.replaced.seqs, 0, i)
	return nil
}

// getReplaced returns the replacement of the batch at seq, or
// events.ErrNotFound.
func (st *Store) getReplaced(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	st.replaced.mu.Lock()
	side := st.replaced.side
	st.replaced.mu.Unlock()
	if side == nil {
		return nil, events.ErrNotFound
	}
	ctx, cancel := opContext(ctx)
	defer cancel()
	m, err := side.GetLastMsgForSubject(ctx, st.replacedPrefix()+"."+strconv.FormatUint(uint64(seq), 10))
	if errors.Is(err, js.ErrMsgNotFound) {
		return nil, events.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get replaced %d: %w", seq, st.mapErr(err))
	}
	return events.Decode(m.Data, seq)
}

// readReplaced calls fn for the events of every replaced batch in
// [from, to), in order.
func (st *Store) readReplaced(ctx context.Context, from, to events.Seq, fn func(events.Event) error) error {
	for _, q := range st.replaced.in(from, to) {
		evs, err := st.getReplaced(ctx, q)
		if errors.Is(err, events.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}
