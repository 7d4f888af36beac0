package hooks

import (
	"github.com/omnictx/omni/hooks/hosts"
	"github.com/omnictx/omni/pipeline"
)

// preread is what a live hook call reads of its payload on a second
// goroutine while its own goroutine redacts and decides: the host's client
// waits idle for the reply, so on a machine of two or more cores this
// costs the call no wall time. Most payloads hold no credential, and the
// redaction then returns them as they came (redact.JSON returns its input
// itself): the preread works on the payload as it came, in the order the
// call needs the results, and each result is used only where it is
// exactly what the call would compute itself:
//
//   - the decoded payload (hosts.DecodePayload), when the redaction
//     returned the very same bytes;
//   - the tool output's reading (pipeline.ReadText of the text the host's
//     Deliver reads) and its token count, when the decided text is that
//     text;
//   - the zstd compression of the Invoked input, when the redaction
//     returned the very same bytes.
//
// A panic on the preread's goroutine is dropped: every result not yet
// made is then computed in line, where the call's own recover sees it.
type preread struct {
	raw []byte
	// same is set by the call after its redaction (it alone reads it):
	// the redaction returned raw itself.
	same bool

	decoded, read, counted, zipped chan struct{}

	// Each result is written before its channel is closed, ok only when
	// it was made.
	dp       decodedPayload
	dpOK     bool
	text     *pipeline.TextRead // nil: no tool output to read
	tokens   int
	tokensOK bool
	input    []byte
	inputOK  bool
}

// besideMin is the smallest payload, in bytes, worth a preread: under it
// the work takes a few microseconds, about what waking a second thread
// costs (BenchmarkHookDaemonSide, 1 KB against 16 KB).
const besideMin = 4 << 10

// startPreread starts the preread of the payload raw (after hosts.Prepare)
// of a live call.
func (e *Engine) startPreread(raw []byte, passthrough bool) *preread {
	pr := &preread{raw: raw, decoded: make(chan struct{}), read: make(chan struct{}),
		counted: make(chan struct{}), zipped: make(chan struct{})}
	go func() {
		chans := []chan struct{}{pr.decoded, pr.read, pr.counted, pr.zipped}
		next := 0
		done := func() { close(chans[next]); next++ }
		defer func() {
			_ = recover()
			for next < len(chans) {
				done()
			}
		}()
		pr.dp = decodePayload(raw)
		pr.dpOK = true
		done()
		text, ok := deliveredText(pr.dp, passthrough)
		if ok {
			pr.text = pipeline.ReadText(text)
		}
		done()
		if ok && e.opt.Tokens != nil {
			pr.tokens, pr.tokensOK = e.opt.Tokens.Count(text), true
		}
		done()
		pr.input, pr.inputOK = e.compress(raw), true
		done()
	}()
	return pr
}

// deliveredText is the text a PostToolUse payload's host delivers
// (Protocol.Deliver, which reads no file and no Engine state); ok is false
// for any other payload.
func deliveredText(dp decodedPayload, passthrough bool) (string, bool) {
	if dp.err != nil || dp.p.HookEventName == "" {
		return "", false
	}
	host := hosts.Detect(dp.p.Signature())
	if hosts.EventOf(host, dp.p.HookEventName) != "PostToolUse" {
		return "", false
	}
	proto, ok := hosts.Lookup(host)
	if !ok {
		return "", false
	}
	p := dp.p // Deliver may write to its payload: its own copy
	hd, ok := proto.Deliver(&p, passthrough)
	if !ok || hd.Req.Text == "" {
		return "", false
	}
	return hd.Req.Text, true
}

// payload returns the decoded payload when the redaction returned it
// unchanged.
func (pr *preread) payload() (decodedPayload, bool) {
	if pr == nil || !pr.same {
		return decodedPayload{}, false
	}
	<-pr.decoded
	return pr.dp, pr.dpOK
}

// textRead returns the reading of text, or nil.
func (pr *preread) textRead(text string) *pipeline.TextRead {
	if pr == nil || !pr.same {
		return nil
	}
	<-pr.read
	if pr.text == nil || pr.text.Text() != text {
		return nil
	}
	return pr.text
}

// tokensOf returns the token count of text when the preread counted it.
func (pr *preread) tokensOf(text string) (int, bool) {
	if pr.textRead(text) == nil {
		return 0, false
	}
	<-pr.counted
	return pr.tokens, pr.tokensOK
}

// compressed returns the compressed input when stdin is the payload the
// preread compressed.
func (pr *preread) compressed(stdin []byte) ([]byte, bool) {
	if pr == nil || !pr.same || !sameBytes(stdin, pr.raw) {
		return nil, false
	}
	<-pr.zipped
	return pr.input, pr.inputOK
}
