package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// storedText is every byte the log holds, compressed fields decoded.
func storedText(t *testing.T, log events.Log) string {
	t.Helper()
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	var sb strings.Builder
	err := log.Read(context.Background(), 0, func(e events.Event) error {
		b, _ := json.Marshal(e)
		sb.Write(b)
		if e.Invoked != nil && e.Invoked.Codec == events.CodecZstd {
			in, err := dec.DecodeAll(e.Invoked.Input, nil)
			if err != nil {
				return err
			}
			sb.Write(in)
		}
		if e.Archived != nil && e.Archived.Codec == events.CodecZstd {
			in, err := dec.DecodeAll(e.Archived.Data, nil)
			if err != nil {
				return err
			}
			sb.Write(in)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// TestForget: a value kept by --keep-secrets runs (in an exec output that
// folds and archives, a hook's command and output) is gone from every
// decoded byte of the log after Forget; the touched invocations replay as
// withheld, the others identically; sequences and the untouched batches
// do not change; its block's handle says forgotten; the recorded event
// holds the keyed hash only; a second Forget finds nothing.
func TestForget(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock(), KeepSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "Zq9-forget-me-4f3e2d1c0b"
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&sb, "compiling unit %02d of the project\n", i)
	}
	plain := sb.String()
	leaky := plain + "token=" + secret + "\n"
	run := func(text string) Result {
		t.Helper()
		r, err := e.Call(ctx, CallInput{Door: events.DoorExec, Command: "make all", Text: text, Session: "s1", KeepSecrets: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	run(leaky)             // seq 1
	r2 := run(leaky)       // seq 2: folds, archives the block with the secret
	run(plain + "other\n") // seq 3: folds the 40 plain lines
	if _, err := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "curl -H 'X-Token: "+secret+"' x", "ok\n")}); err != nil {
		t.Fatal(err) // seq 4
	}
	if len(r2.Folds) == 0 {
		t.Fatalf("seq 2 did not fold: %q", r2.Delivered)
	}
	h := r2.Folds[0].Handle
	before, _ := log.Get(ctx, 3)
	if !strings.Contains(storedText(t, log), secret) {
		t.Fatal("the secret is not in the log: the test proves nothing")
	}

	key := []byte("0123456789abcdef0123456789abcdef")
	f, seq, err := Forget(ctx, log, []byte(secret), key, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if seq != 5 || fmt.Sprint(f.Seqs) != "[1 2 4]" || f.Withheld != 3 || len(f.Handles) != 1 || f.Handles[0] != h || f.Key != ForgetKey(key, []byte(secret)) {
		t.Fatalf("forgotten at %d: %+v", seq, f)
	}
	if s := storedText(t, log); strings.Contains(s, secret) {
		t.Fatal("the secret is still in the log")
	}
	if after, _ := log.Get(ctx, 3); !equalJSON(before, after) {
		t.Errorf("an untouched batch changed")
	}
	if last, _ := log.Last(ctx); last != 5 {
		t.Errorf("last %d", last)
	}

	sum, err := Verify(ctx, log, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Withheld != 3 || sum.Compared != sum.Identical || sum.Compared == 0 {
		t.Errorf("verify after forget: %+v", sum)
	}
	r, err := Replay(ctx, log, 2, nil)
	if err != nil || !r.Withheld {
		t.Errorf("replay of a touched invocation: %+v %v", r, err)
	}

	e2, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Retrieve(ctx, h, events.Reader{}); !errors.Is(err, ErrForgotten) || !errors.Is(err, ErrUnknownHandle) {
		t.Errorf("retrieve of a forgotten block: %v", err)
	}
	if _, seq, err := Forget(ctx, log, []byte(secret), key, time.Now()); err != nil || seq != 0 {
		t.Errorf("second forget: seq %d, %v", seq, err)
	}
	if _, _, err := Forget(ctx, log, []byte("short"), key, time.Now()); err == nil {
		t.Error("a 5-byte value was accepted")
	}
}

func equalJSON(a, b []events.Event) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestForgetEscapedForms: a value that a JSON payload stores escaped
// (quotes, backslashes, "<>&") inside a compressed hook input is found and
// erased, not reported absent.
func TestForgetEscapedForms(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock(), KeepSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{`Zq"9\forget&me<4f3e>2d1c`, "pw&<x>-0123456789"} {
		var sb strings.Builder
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&sb, "row %03d of a long listing that compresses well\n", i)
		}
		sb.WriteString("password: " + secret + "\n")
		if _, err := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "cat conf", sb.String())}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(storedText(t, log), string(Forms([]byte(secret))[1])) {
			t.Fatal("the escaped secret is not in the log: the test proves nothing")
		}
		f, seq, err := Forget(ctx, log, []byte(secret), []byte("0123456789abcdef0123456789abcdef"), time.Now())
		if err != nil || seq == 0 || f.Withheld == 0 {
			t.Fatalf("forget %q: seq %d, %+v, %v", secret, seq, f, err)
		}
		for _, form := range Forms([]byte(secret)) {
			if strings.Contains(storedText(t, log), string(form)) {
				t.Errorf("%q is still in the log as %q", secret, form)
			}
		}
	}
}

// TestSharedLogIgnoresKeepSecrets: on a shared log (a team's stream),
// --keep-secrets still redacts what is recorded and delivered, at the hook
// and exec doors.
func TestSharedLogIgnoresKeepSecrets(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock(), KeepSecrets: true, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "Zq9-shared-keep-4f3e2d1c0b9a"
	if _, err := e.Call(ctx, CallInput{Door: events.DoorExec, Command: "env", Text: "API_TOKEN=" + secret + "\n", Session: "s1", KeepSecrets: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "env", "API_TOKEN="+secret+"\n")}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(storedText(t, log), secret) {
		t.Error("a shared log recorded a raw secret for --keep-secrets")
	}
}

// hidingLog is a shared log that never delivers one batch (as a team's
// stream skips a forged one).
type hidingLog struct {
	*memlog.Log
	hidden events.Seq
}

func (h hidingLog) Read(ctx context.Context, from events.Seq, fn func(events.Event) error) error {
	return h.Log.Read(ctx, from, func(e events.Event) error {
		if e.Seq == h.hidden {
			return nil
		}
		return fn(e)
	})
}

// TestSharedLogPassesOverAnUnreadableLastBatch: a newest batch the log
// does not deliver (rejected as forged) does not make every later append
// conflict: the Engine passes over it and appends after it.
func TestSharedLogPassesOverAnUnreadableLastBatch(t *testing.T) {
	ctx := context.Background()
	ml := memlog.New()
	log := hidingLog{Log: ml, hidden: 2}
	e, err := New(ctx, log, Options{Now: fixedClock(), Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Call(ctx, CallInput{Door: events.DoorExec, Command: "ls", Text: "a\nb\n", Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	// Another writer's batch the log will not deliver.
	if _, err := ml.Append(ctx, []events.Event{{ID: "01KFORGED00000000000000000", Kind: events.KindRemembered, Time: time.Now(),
		Remembered: &events.Remembered{Fact: "forged"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Call(ctx, CallInput{Door: events.DoorExec, Command: "ls", Text: "c\nd\n", Session: "s1"}); err != nil {
		t.Fatalf("append after an unreadable newest batch: %v", err)
	}
	if last, _ := ml.Last(ctx); last != 3 {
		t.Errorf("the second call was not appended: last %d", last)
	}
}
