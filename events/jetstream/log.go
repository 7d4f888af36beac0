package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/platform"
)

var _ events.Log = (*Store)(nil)

const (
	// readBatch is how many messages one Read round trip asks for.
	readBatch = 1024
	// readMaxBytes caps the bytes one Read round trip asks for (the server
	// always sends at least one message, whatever its size).
	readMaxBytes = 8 << 20
	// statusHeader and descrHeader carry the status of a NATS control reply
	// ("404", "204", "503") and its text.
	statusHeader = "Status"
	descrHeader  = "Description"
)

// directGetRequest is the body of a direct-get request (the server's
// JSApiMsgGetRequest, only the fields used here).
type directGetRequest struct {
	Seq      uint64 `json:"seq"`
	Batch    int    `json:"batch,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// Append encodes batch (events.Encode) and publishes it as one message to
// the stream; it returns the stream sequence from the server's PubAck, so
// the batch is stored (written to the file store, which reaches the
// operating system before the ack, docs/JETSTREAM.md) when Append returns
// nil. ctx bounds the call; without a deadline it is 5 s (DefaultOpTimeout). Errors: events.ErrClosed after
// Close; a wrapped encode, payload-size (the encoded batch must fit
// Options.MaxPayload) or publish error otherwise, in which case the batch
// may or may not be stored.
func (st *Store) Append(ctx context.Context, batch []events.Event) (events.Seq, error) {
	return st.append(ctx, batch, nil)
}

var _ events.Conditional = (*Store)(nil)

// AppendAfter is Append when the stream's newest batch is last (0: the
// stream is empty): the server checks it when it stores the message (the
// leader, on a cluster), so two machines never both append after the same
// batch. Errors: events.ErrConflict when another writer appended first
// (nothing was stored); Append's otherwise.
func (st *Store) AppendAfter(ctx context.Context, batch []events.Event, last events.Seq) (events.Seq, error) {
	return st.append(ctx, batch, &last)
}

// errWrongLastSequence and errWrongLastSequenceReplicated are JetStream's
// error codes for a publish whose expected last sequence is not the
// stream's (10071; a replicated stream reports 10164).
const (
	errWrongLastSequence           js.ErrorCode = 10071
	errWrongLastSequenceReplicated js.ErrorCode = 10164
)

func (st *Store) append(ctx context.Context, batch []events.Event, last *events.Seq) (events.Seq, error) {
	if st.isClosed() {
		return 0, events.ErrClosed
	}
	data, err := events.Encode(batch)
	if err != nil {
		return 0, err
	}
	if err := st.Broken(); err != nil {
		return 0, err
	}
	if err := st.checkSpace(len(data)); err != nil {
		return 0, err
	}
	if err := st.allow(); err != nil {
		return 0, fmt.Errorf("append: %w", err)
	}
	ctx, cancel := st.remoteContext(ctx)
	defer cancel()
	opts := []js.PublishOpt{js.WithExpectStream(st.name)}
	if last != nil {
		opts = append(opts, js.WithExpectLastSequence(uint64(*last)))
	}
	start := time.Now()
	ack, err := st.js.Publish(ctx, st.pubSubject, data, opts...)
	if err != nil {
		var apiErr *js.APIError
		if errors.As(err, &apiErr) && (apiErr.ErrorCode == errWrongLastSequence || apiErr.ErrorCode == errWrongLastSequenceReplicated) {
			st.observe(nil)
			return 0, events.ErrConflict
		}
		st.observe(err)
		// Only a server that kept an append waiting for brokenWait is
		// suspect: a caller whose deadline was nearly spent when it
		// appended says nothing about the store.
		if errors.Is(err, context.DeadlineExceeded) && st.srv != nil && time.Since(start) >= brokenWait {
			st.timeouts.Add(1)
		}
		return 0, fmt.Errorf("append: %w", st.mapErr(err))
	}
	st.timeouts.Store(0)
	st.observe(nil)
	return events.Seq(ack.Sequence), nil
}

// MinFreeBytes is the free space Append leaves on the store's file system,
// beyond the batch itself: room for a new 8 MiB message block (the file
// store's block size, docs/JETSTREAM.md) and its index, with slack. Measured (2026-11-29, a
// 12 MiB tmpfs): once a write fails for lack of space, the embedded
// server's publishes time out, and keep timing out after space is freed,
// until the server restarts. So omni refuses the append first.
const MinFreeBytes = 32 << 20

// ErrDiskFull: the store's file system has less than the batch plus
// MinFreeBytes free. Nothing was written.
var ErrDiskFull = errors.New("the store's disk is (nearly) full")

// ErrBroken: brokenAfter appends in a row timed out after waiting at least
// brokenWait each; the embedded server no
// longer stores (this is what a full disk leaves behind). The owner should
// close the store and open it again (the daemon exits, and the next hook
// starts a new one).
var ErrBroken = errors.New("the store stopped acknowledging appends")

// brokenAfter is how many consecutive append timeouts break the store.
const brokenAfter = 2

// brokenWait is how long an append must have waited for its
// acknowledgement before its timeout counts towards brokenAfter: an
// acknowledgement on a healthy store takes well under 10 ms, so a second
// without one is the server's failure, while an append that ran out of a
// caller's nearly spent deadline is not. A variable for tests.
var brokenWait = time.Second

// Broken returns ErrBroken once the store stopped acknowledging appends,
// nil otherwise.
func (st *Store) Broken() error {
	if st.timeouts.Load() >= brokenAfter {
		return ErrBroken
	}
	return nil
}

// checkSpace fails with ErrDiskFull when the file system of the store has
// less than n + MinFreeBytes free. It is one statfs call (microseconds);
// a store reached through Options.URL is not checked.
func (st *Store) checkSpace(n int) error {
	if st.dataDir == "" {
		return nil
	}
	free, err := freeBytes(st.dataDir)
	if err != nil {
		return nil // cannot tell: let the server decide
	}
	if free < uint64(n)+MinFreeBytes {
		return fmt.Errorf("%w: %d MiB free in %s, %d MiB needed", ErrDiskFull, free>>20, st.dataDir, (uint64(n)+MinFreeBytes)>>20)
	}
	return nil
}

// freeBytes is FreeBytes; tests replace it to simulate a full disk.
var freeBytes = FreeBytes

// FreeBytes returns the bytes available to this user on the file system
// holding path (platform.FreeBytes: statfs f_bavail × f_bsize on Unix,
// GetDiskFreeSpaceEx on Windows).
func FreeBytes(path string) (uint64, error) { return platform.FreeBytes(path) }

// Read calls fn for every event of every batch from sequence from
// (inclusive; 0 means 1) up to the last sequence that existed when Read
// started, in (Seq, Index) order. Batches appended while Read runs are not
// visited. If the log starts after from (First > from), Read starts at
// First. It fetches batches with batched direct gets (up to 1024 messages or
// 8 MiB per round trip) and holds no lock while fn runs, so fn may call the
// store. It returns fn's first error unchanged, ctx's error, a wrapped
// decode error (events.Decode), or events.ErrClosed.
func (st *Store) Read(ctx context.Context, from events.Seq, fn func(events.Event) error) error {
	if st.isClosed() {
		return events.ErrClosed
	}
	state, err := st.state(ctx)
	if err != nil {
		return err
	}
	last := events.Seq(state.LastSeq)
	seq := max(from, 1)
	if state.Msgs == 0 || seq > last {
		return nil
	}
	inbox := st.nc.NewInbox()
	sub, err := st.nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("read: %w", st.mapErr(err))
	}
	defer func() { _ = sub.Unsubscribe() }()
	// The request bounds what is in flight (readMaxBytes plus one message).
	_ = sub.SetPendingLimits(-1, -1)

	for seq <= last {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(events.Seq(readBatch), last-seq+1))
		msgs, err := st.fetch(ctx, sub, inbox, seq, n)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			if msgs, err = st.leaderNext(ctx, seq); err != nil {
				return err
			}
		}
		if len(msgs) == 0 {
			// Nothing at or after seq: the rest was removed, or replaced.
			return st.readReplaced(ctx, seq, last+1, fn)
		}
		for _, m := range msgs {
			if m.seq > last {
				return st.readReplaced(ctx, seq, last+1, fn)
			}
			// Batches replaced in place (omni forget) sit in the gaps.
			if err := st.readReplaced(ctx, seq, m.seq, fn); err != nil {
				return err
			}
			evs, err := st.decode(m.data, m.seq, m.subject)
			if errors.Is(err, ErrForged) {
				seq = m.seq + 1
				continue // reported by decode; never folded
			}
			if err != nil {
				return fmt.Errorf("read: %w", err)
			}
			for _, e := range evs {
				if err := fn(e); err != nil {
					return err
				}
			}
			seq = m.seq + 1
		}
	}
	return nil
}

// stored is one message of a direct-get reply.
type stored struct {
	seq     events.Seq
	data    []byte
	subject string
}

// fetch sends one batched direct get for up to n messages from seq and
// collects the reply, up to its end-of-batch marker.
func (st *Store) fetch(ctx context.Context, sub *nats.Subscription, inbox string, seq events.Seq, n int) ([]stored, error) {
	req, err := json.Marshal(directGetRequest{Seq: uint64(seq), Batch: n, MaxBytes: readMaxBytes})
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	ctx, cancel := opContext(ctx)
	defer cancel()
	if err := st.nc.PublishRequest(st.directGet, inbox, req); err != nil {
		return nil, fmt.Errorf("read: %w", st.mapErr(err))
	}
	var out []stored
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("read from %d: %w", seq, st.mapErr(err))
		}
		if status := m.Header.Get(statusHeader); status != "" {
			switch status {
			case "204": // end of batch
				return out, nil
			case "404": // no message at or after seq
				return out, nil
			case "503":
				return nil, fmt.Errorf("read from %d: %w", seq, ErrNoResponders)
			default:
				return nil, fmt.Errorf("read from %d: status %s %s", seq, status, m.Header.Get(descrHeader))
			}
		}
		s, err := msgSeq(m)
		if err != nil {
			return nil, fmt.Errorf("read from %d: %w", seq, err)
		}
		out = append(out, stored{seq: s, data: m.Data, subject: m.Header.Get(subjectHeader)})
	}
}

// msgSeq reads the stream sequence of a direct-get reply message.
func msgSeq(m *nats.Msg) (events.Seq, error) {
	v := m.Header.Get(js.SequenceHeader)
	s, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad %s header %q", js.SequenceHeader, v)
	}
	return events.Seq(s), nil
}

// Get returns the events of the batch at seq, with Seq and Index set.
// Errors: events.ErrNotFound when no batch is stored at seq (0, never
// written, or removed); events.ErrClosed after Close; a wrapped decode or
// request error otherwise. ctx bounds the call (5 s without a deadline).
func (st *Store) Get(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	if st.isClosed() {
		return nil, events.ErrClosed
	}
	if seq == 0 {
		return nil, events.ErrNotFound
	}
	req, err := json.Marshal(directGetRequest{Seq: uint64(seq)})
	if err != nil {
		return nil, fmt.Errorf("get %d: %w", seq, err)
	}
	if err := st.allow(); err != nil {
		return nil, fmt.Errorf("get %d: %w", seq, err)
	}
	ctx, cancel := st.remoteContext(ctx)
	defer cancel()
	m, err := st.nc.RequestWithContext(ctx, st.directGet, req)
	st.observe(err)
	if err != nil {
		return nil, fmt.Errorf("get %d: %w", seq, st.mapErr(err))
	}
	if status := m.Header.Get(statusHeader); status != "" {
		if status == "404" {
			if st.remote != nil {
				return st.leaderGet(ctx, seq)
			}
			return st.getReplaced(ctx, seq)
		}
		return nil, fmt.Errorf("get %d: status %s %s", seq, status, m.Header.Get(descrHeader))
	}
	got, err := msgSeq(m)
	if err != nil {
		return nil, fmt.Errorf("get %d: %w", seq, err)
	}
	if got != seq {
		if st.remote != nil {
			return st.leaderGet(ctx, seq)
		}
		return st.getReplaced(ctx, seq)
	}
	return st.decodeGot(m.Data, seq, m.Header.Get(subjectHeader))
}

// subjectHeader names the subject a stored message was published on, in a
// direct-get reply.
const subjectHeader = "Nats-Subject"

// decodeGot is decode for Get: a forged batch is events.ErrNotFound (it
// is not part of the log).
func (st *Store) decodeGot(data []byte, seq events.Seq, subject string) ([]events.Event, error) {
	evs, err := st.decode(data, seq, subject)
	if errors.Is(err, ErrForged) {
		return nil, events.ErrNotFound
	}
	return evs, err
}

// leaderGet is Get's answer when a direct get found no batch at seq: on a
// cluster a follower may have answered before it caught up (followers
// serve direct gets once 90% synchronized, nats-server
// jetstream_cluster.go), so the stream's leader is asked (the JetStream
// API's message get, which only the leader answers). Embedded, the
// answer stands: events.ErrNotFound.
func (st *Store) leaderGet(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	if st.remote == nil {
		return nil, events.ErrNotFound
	}
	m, err := st.leaderMsg(ctx, seq, false)
	if errors.Is(err, events.ErrNotFound) {
		return nil, events.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get %d: %w", seq, err)
	}
	if m.seq != seq {
		return nil, events.ErrNotFound
	}
	return st.decodeGot(m.data, seq, m.subject)
}

// leaderNext is Read's and Check's answer when a batched direct get found
// nothing at or after seq: on a cluster the leader is asked for the first
// batch at or after seq (see leaderGet), and its answer returned as one
// message, or none when the leader has none either. Embedded: none.
func (st *Store) leaderNext(ctx context.Context, seq events.Seq) ([]stored, error) {
	if st.remote == nil {
		return nil, nil
	}
	m, err := st.leaderMsg(ctx, seq, true)
	if errors.Is(err, events.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read from %d: %w", seq, err)
	}
	return []stored{m}, nil
}

// leaderMsg asks the stream's leader for the message at seq, or with next
// the first one at or after seq. Errors: events.ErrNotFound when there is
// none, the request's, or the API's error.
func (st *Store) leaderMsg(ctx context.Context, seq events.Seq, next bool) (stored, error) {
	req := struct {
		Seq  uint64 `json:"seq"`
		Next string `json:"next_by_subj,omitempty"`
	}{Seq: uint64(seq)}
	if next {
		req.Next = st.subject
		if st.pubSubject != st.subject || st.remote != nil {
			req.Next = ">" // the unattested subject and every machine's
		}
	}
	b, err := json.Marshal(req)
	if err != nil {
		return stored{}, err
	}
	ctx, cancel := st.remoteContext(ctx)
	defer cancel()
	m, err := st.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+st.name, b)
	st.observe(err)
	if err != nil {
		return stored{}, st.mapErr(err)
	}
	var rep struct {
		Message *struct {
			Seq     uint64 `json:"seq"`
			Data    []byte `json:"data"`
			Subject string `json:"subject"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return stored{}, fmt.Errorf("message get reply: %w", err)
	}
	switch {
	case rep.Error != nil && rep.Error.Code == 404:
		return stored{}, events.ErrNotFound
	case rep.Error != nil:
		return stored{}, fmt.Errorf("message get: %d %s", rep.Error.Code, rep.Error.Description)
	case rep.Message == nil:
		return stored{}, errors.New("message get: empty reply")
	}
	return stored{seq: events.Seq(rep.Message.Seq), data: rep.Message.Data, subject: rep.Message.Subject}, nil
}

// Last returns the stream's last sequence: the newest batch, 0 when nothing
// was ever appended. Errors: events.ErrClosed after Close, or a wrapped
// stream-info error. ctx bounds the call (5 s without a deadline).
func (st *Store) Last(ctx context.Context) (events.Seq, error) {
	state, err := st.state(ctx)
	if err != nil {
		return 0, err
	}
	return events.Seq(state.LastSeq), nil
}

// First returns the sequence of the oldest stored batch, 0 when the stream
// holds none. It is 1 unless omni gc removed batches (the stream has no
// MaxAge). Errors as for Last.
func (st *Store) First(ctx context.Context) (events.Seq, error) {
	state, err := st.state(ctx)
	if err != nil {
		return 0, err
	}
	first := events.Seq(state.FirstSeq)
	if state.Msgs == 0 {
		first = 0
	}
	if r := st.replaced.min(); r != 0 && (first == 0 || r < first) {
		first = r // the oldest batch was replaced in place
	}
	return first, nil
}

// state fetches the stream's current state.
func (st *Store) state(ctx context.Context) (js.StreamState, error) {
	if st.isClosed() {
		return js.StreamState{}, events.ErrClosed
	}
	ctx, cancel := opContext(ctx)
	defer cancel()
	info, err := st.stream.Info(ctx)
	if err != nil {
		return js.StreamState{}, fmt.Errorf("stream info: %w", st.mapErr(err))
	}
	return info.State, nil
}

// mapErr turns a connection-closed error after Close into events.ErrClosed.
func (st *Store) mapErr(err error) error {
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionDraining) ||
		errors.Is(err, nats.ErrBadSubscription) {
		if st.isClosed() {
			return events.ErrClosed
		}
		return fmt.Errorf("%w: %w", ErrConnClosed, err)
	}
	return err
}

// Purge removes every batch with a sequence below before from the stream
// (physical retention, omni gc). Each removed batch is first securely
// deleted (its bytes overwritten on disk with random data, JetStream's
// secure delete), so what gc removed cannot be read back from the store's
// files (a purge alone leaves the records in their block until the block
// is rewritten). Sequences are never reused; First reports
// the new start and Get of a removed batch is events.ErrNotFound. The
// newest batch is never removed: before is capped at Last. Errors: the
// stream's, wrapped, or events.ErrClosed.
func (st *Store) Purge(ctx context.Context, before events.Seq) error {
	last, err := st.Last(ctx)
	if err != nil {
		return err
	}
	before = min(before, last)
	if before <= 1 {
		return nil
	}
	first, err := st.First(ctx)
	if err != nil {
		return err
	}
	for q := max(first, 1); q < before; q++ {
		c, cancel := opContext(ctx)
		err := st.stream.SecureDeleteMsg(c, uint64(q))
		cancel()
		if err != nil && !gone(err) {
			return fmt.Errorf("overwrite batch %d: %w", q, st.mapErr(err))
		}
	}
	ctx, cancel := opContext(ctx)
	defer cancel()
	if err := st.stream.Purge(ctx, js.WithPurgeSequence(uint64(before))); err != nil {
		return fmt.Errorf("purge below %d: %w", before, st.mapErr(err))
	}
	return st.purgeReplaced(ctx, before)
}

// Health is what the stream says about itself, for omni doctor.
type Health struct {
	// First and Last are the oldest and newest stored sequences; Batches
	// the number the stream counts and Bytes their size on disk.
	First   events.Seq `json:"first"`
	Last    events.Seq `json:"last"`
	Batches uint64     `json:"batches"`
	Bytes   uint64     `json:"bytes"`
	// Lost lists sequences the server reported damaged and dropped while
	// recovering the store, at most the first 100; LostBatches counts them
	// all and LostBytes their size. (The server does not always report a
	// loss here: Check finds the rest.)
	Lost        []events.Seq `json:"server_lost,omitempty"`
	LostBatches int          `json:"server_lost_batches,omitempty"`
	LostBytes   uint64       `json:"server_lost_bytes,omitempty"`
	// Deleted counts sequences missing inside [First, Last].
	Deleted int `json:"deleted,omitempty"`
}

// Health reports the stream's state. Errors as for Last.
func (st *Store) Health(ctx context.Context) (Health, error) {
	s, err := st.state(ctx)
	if err != nil {
		return Health{}, err
	}
	h := Health{Batches: s.Msgs, Bytes: s.Bytes, Deleted: s.NumDeleted}
	if s.Msgs > 0 {
		h.First, h.Last = events.Seq(s.FirstSeq), events.Seq(s.LastSeq)
	}
	if s.Lost != nil {
		h.LostBatches, h.LostBytes = len(s.Lost.Msgs), s.Lost.Bytes
		for _, q := range s.Lost.Msgs[:min(len(s.Lost.Msgs), 100)] {
			h.Lost = append(h.Lost, events.Seq(q))
		}
	}
	return h, nil
}

// CheckResult is what Check found.
type CheckResult struct {
	// First and Last bound the stream; Readable counts the batches read.
	First    events.Seq `json:"first"`
	Last     events.Seq `json:"last"`
	Readable int        `json:"readable"`
	// Missing lists, sorted, the sequences in [First, Last] that could not
	// be read: removed by the server while recovering a damaged file, or
	// still counted but failing their checksum. The log never deletes a
	// single batch, so every one is a loss. At most maxMissing are listed;
	// MissingCount counts them all.
	Missing      []events.Seq `json:"missing,omitempty"`
	MissingCount int          `json:"missing_count"`
}

// maxMissing caps CheckResult.Missing.
const maxMissing = 100000

// Check reads every stored batch (without decoding it) and reports the
// sequences inside the stream's range that cannot be read. It costs one
// pass over the store (batched direct gets of up to 8 MiB). Errors: the
// store's, or ctx's.
func (st *Store) Check(ctx context.Context) (CheckResult, error) {
	var r CheckResult
	if st.isClosed() {
		return r, events.ErrClosed
	}
	state, err := st.state(ctx)
	if err != nil {
		return r, err
	}
	if state.Msgs == 0 && state.LastSeq == 0 {
		return r, nil
	}
	r.First, r.Last = events.Seq(state.FirstSeq), events.Seq(state.LastSeq)
	if q := st.replaced.min(); q != 0 && q < r.First {
		r.First = q
	}
	inbox := st.nc.NewInbox()
	sub, err := st.nc.SubscribeSync(inbox)
	if err != nil {
		return r, fmt.Errorf("check: %w", st.mapErr(err))
	}
	defer func() { _ = sub.Unsubscribe() }()
	_ = sub.SetPendingLimits(-1, -1)
	miss := func(from, to events.Seq) { // [from, to)
		for q := from; q < to; q++ {
			if st.replaced.has(q) {
				r.Readable++ // replaced in place (omni forget): readable
				continue
			}
			r.MissingCount++
			if len(r.Missing) < maxMissing {
				r.Missing = append(r.Missing, q)
			}
		}
	}
	seq := r.First
	for seq <= r.Last {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		msgs, err := st.fetch(ctx, sub, inbox, seq, int(min(events.Seq(readBatch), r.Last-seq+1)))
		if err != nil {
			return r, err
		}
		if len(msgs) == 0 {
			if msgs, err = st.leaderNext(ctx, seq); err != nil {
				return r, err
			}
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if m.seq > r.Last {
				break
			}
			miss(seq, m.seq)
			r.Readable++
			seq = m.seq + 1
		}
	}
	miss(seq, r.Last+1)
	return r, nil
}

// DeleteBatches removes the given batches from the stream's count (a
// repair after Check: they are unreadable anyway) and returns how many it
// removed. A batch already gone is not an error; nor is one whose stored
// bytes fail their checksum (JetStream error 10057: the server cannot
// delete what it cannot load), which stays counted.
func (st *Store) DeleteBatches(ctx context.Context, seqs []events.Seq) (int, error) {
	if st.isClosed() {
		return 0, events.ErrClosed
	}
	n := 0
	for _, q := range seqs {
		c, cancel := opContext(ctx)
		err := st.stream.DeleteMsg(c, uint64(q))
		cancel()
		switch {
		case err == nil:
			n++
		case errors.Is(err, js.ErrMsgNotFound):
		// nats.go flattens the API error of a failed delete into text.
		case errors.Is(err, js.ErrMsgDeleteUnsuccessful) && strings.Contains(err.Error(), fmt.Sprintf("err_code=%d", errCorruptMessage)):
		default:
			return n, fmt.Errorf("delete batch %d: %w", q, st.mapErr(err))
		}
	}
	return n, nil
}

// errCorruptMessage is JetStream's error code for a stored message that
// fails its checksum ("malformed or corrupt message").
const errCorruptMessage js.ErrorCode = 10057
