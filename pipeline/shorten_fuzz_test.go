package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzShorten runs the whole pipeline: no panic; unchanged means
// byte-identical; every output line is an input line or a marker; every
// failure line survives (unless the final cut says it dropped the middle);
// no growth unless something was redacted; every block is named and
// sound; a JSON payload stays JSON. Seeds: the real fixtures under 4 KB
// with their commands, and synthetic cases for every distiller.
func FuzzShorten(f *testing.F) {
	metas, _ := filepath.Glob(filepath.Join("..", "..", "shared", "fixtures", "real", "*", "meta.json"))
	for _, m := range metas {
		var meta struct {
			Command  string `json:"command"`
			ExitCode int    `json:"exit_code"`
		}
		b, err := os.ReadFile(m)
		if err != nil || json.Unmarshal(b, &meta) != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(m), "output.txt"))
		if err != nil || len(raw) > 4096 {
			continue
		}
		f.Add(meta.Command, string(raw), meta.ExitCode)
	}
	f.Add("go test -v ./...", shGoTestV(20), 0)
	f.Add("cargo test", shBench16K()[:3000], 101)
	f.Add("git diff", "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n--- b\n+c\n d\n", 0)
	f.Add("git log -p", "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: a\nDate: b\n\n    subject\n\n    body\n\ndiff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n", 0)
	f.Add("npm ci", "npm http fetch GET 200 x\nnpm http fetch GET 200 y\nadded 2 packages in 1s\n", 0)
	f.Add("env", "A=1\nAPI_KEY=sk-123\n", 0)
	f.Add("cat c.json", `{"token": "abc", "x": [1, 2]}`, 0)
	f.Add("./run.sh", strings.Repeat("2026 DEBUG a b\n", 20)+"2026 ERROR x: y\n", 1)
	f.Add("pytest", "===== FAILURES =====\n____ t ____\n    def t():\n>       assert 1 == 2\nE       assert 1 == 2\n\nt.py:3: AssertionError\n==== 1 failed in 0.1s ====\n", 1)
	f.Fuzz(func(t *testing.T, cmd, text string, exit int) {
		req := ShortenRequest{Command: cmd, Text: text, ExitCode: exit}
		res := Shorten(req)
		shCheck(t, req, res)
		if json.Valid([]byte(text)) && res.Changed && !json.Valid([]byte(res.Text)) {
			t.Fatalf("a JSON payload no longer parses: %q", res.Text)
		}
		if res.Changed == (res.Text == text) {
			t.Fatalf("Changed=%v but text equality says otherwise", res.Changed)
		}
	})
}
