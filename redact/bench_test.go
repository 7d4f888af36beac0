package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/omnictx/omni/redact"
	"github.com/omnictx/omni/redact/redacttest"
)

// benchPlain is 16 KiB of ordinary tool output: go test lines, paths, YAML
// and code with names and `=` and `:` but no credential.
func benchPlain() string {
	var b strings.Builder
	for i := 0; b.Len() < 16<<10; i++ {
		switch i % 4 {
		case 0:
			b.WriteString("ok  \tgithub.com/acme/api/internal/store\t0.123s\tcoverage: 81.2% of statements\n")
		case 1:
			b.WriteString("  timeout: 30s\n  retries: 3\n  key: primary_id\n")
		case 2:
			b.WriteString("func (s *Server) handle(w http.ResponseWriter, r *http.Request) { token := r.Header.Get(\"X\") }\n")
		default:
			b.WriteString("src/components/Button.tsx:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.\n")
		}
	}
	return b.String()
}

// benchSecrets is benchPlain with one generated case in every 40 lines.
func benchSecrets() string {
	lines := strings.SplitAfter(benchPlain(), "\n")
	cs := redacttest.New(1).Cases()
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i%40 == 0 {
			b.WriteString(cs[(i/40)%len(cs)].Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func BenchmarkRedactPlain16K(b *testing.B) {
	s := benchPlain()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		redact.Text(s)
	}
}

func BenchmarkRedactSecrets16K(b *testing.B) {
	s := benchSecrets()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		redact.Text(s)
	}
}

// BenchmarkRedactHookPayload is the door's cost on a Bash hook payload of
// 16 KiB (the JSON walk, decoding and redacting every string).
func BenchmarkRedactHookPayload(b *testing.B) {
	p, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "go test ./..."}, "tool_response": map[string]any{"stdout": benchPlain(), "stderr": ""}})
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		redact.JSON(p, nil)
	}
}

func BenchmarkRedactBase64_1M(b *testing.B) {
	s := b64Text(1 << 20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		redact.Text(s)
	}
}

func b64Text(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, n*3/4)
	for i := range raw {
		raw[i] = byte(r.UintN(256))
	}
	s := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	for i := 0; i < len(s); i += 76 {
		b.WriteString(s[i:min(len(s), i+76)])
		b.WriteByte('\n')
	}
	return b.String()
}

// TestBadInput: 16 MiB of base64 (in lines, and as one line), random
// binary and invalid UTF-8 pass without a panic, keep their line count,
// and are not rewritten (there is no credential in them).
func TestBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("16 MiB inputs")
	}
	r := rand.New(rand.NewPCG(3, 4))
	bin := make([]byte, 4<<20)
	for i := range bin {
		bin[i] = byte(r.UintN(256))
	}
	lined := b64Text(12 << 20)
	for name, s := range map[string]string{
		"base64 lines":  lined,
		"base64 line":   strings.ReplaceAll(lined, "\n", ""),
		"binary":        string(bin),
		"invalid utf-8": strings.Repeat("\xff\xfe token=\xc3 password: \xe2\x82 ", 1<<16),
	} {
		got, _ := redact.Text(s)
		if strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Errorf("%s: line count changed", name)
		}
		if name != "invalid utf-8" && got != s {
			t.Errorf("%s: rewritten", name)
		}
		out, _ := redact.JSON([]byte(s), nil)
		_ = out
	}
}
