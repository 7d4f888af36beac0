package redact_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/omnictx/omni/redact"
	"github.com/omnictx/omni/redact/redacttest"
)

// TestFakeCredentials: every generated fake credential, in its context, is
// gone after Text and after JSON over a payload that carries it; the line
// count holds and JSON stays JSON.
func TestFakeCredentials(t *testing.T) {
	g := redacttest.New(0)
	t.Logf("seed %d", g.Seed)
	kinds := redact.Counts{}
	for round := 0; round < 20; round++ {
		for _, c := range g.Cases() {
			got, n := redact.TextCounts(c.Text, kinds)
			for _, v := range c.Values {
				if strings.Contains(got, v) {
					t.Errorf("%s: value %q survives Text:\n%s", c.Kind, v, got)
				}
			}
			if n == 0 {
				t.Errorf("%s: nothing counted", c.Kind)
			}
			if strings.Count(got, "\n") != strings.Count(c.Text, "\n") {
				t.Errorf("%s: line count changed:\n%s", c.Kind, got)
			}
			if json.Valid([]byte(c.Text)) && !json.Valid([]byte(got)) {
				t.Errorf("%s: JSON broken:\n%s", c.Kind, got)
			}
			payload, _ := json.Marshal(map[string]any{"tool_input": map[string]string{"command": "cat x"},
				"tool_response": map[string]string{"stdout": c.Text}})
			out, fields := redact.JSON(payload, nil)
			for _, v := range c.Values {
				ev, _ := json.Marshal(v)
				if strings.Contains(string(out), v) || strings.Contains(string(out), strings.Trim(string(ev), `"`)) {
					t.Errorf("%s: value %q survives JSON:\n%s", c.Kind, v, out)
				}
			}
			if fields["tool_response"] == 0 || !json.Valid(out) {
				t.Errorf("%s: JSON fields %v, valid %v", c.Kind, fields, json.Valid(out))
			}
		}
		if t.Failed() {
			break
		}
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, k+"="+itoa(n))
	}
	sort.Strings(ks)
	t.Logf("values per rule kind: %s", strings.Join(ks, " "))
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestPrintedCredentials: the output of a command whose name says it
// prints a credential loses the generated words it printed, through Output
// and through JSON over a hook payload that names the command (before or
// after the output).
func TestPrintedCredentials(t *testing.T) {
	g := redacttest.New(0)
	t.Logf("seed %d", g.Seed)
	for round := 0; round < 20; round++ {
		for _, c := range g.PrintedCases() {
			if !redact.PrintsSecret(c.Command) {
				t.Errorf("%s: %q not seen as printing a credential", c.Kind, c.Command)
			}
			got, n := redact.Output(c.Command, c.Text)
			if l := redacttest.Found(got, c.Values); len(l) > 0 || n == 0 {
				t.Errorf("%s: Output keeps %q (n=%d):\n%s", c.Kind, l, n, got)
			}
			in := []byte(`{"tool_input":{"command":` + itoa2(c.Command) + `},"tool_response":{"stdout":` + itoa2(c.Text) + `}}`)
			rev := []byte(`{"tool_response":{"stdout":` + itoa2(c.Text) + `},"tool_input":{"command":` + itoa2(c.Command) + `}}`)
			for _, p := range [][]byte{in, rev} {
				out, _ := redact.JSON(p, nil)
				if l := redacttest.Found(string(out), c.Values); len(l) > 0 || !json.Valid(out) {
					t.Errorf("%s: JSON keeps %q:\n%s", c.Kind, l, out)
				}
			}
		}
		if t.Failed() {
			break
		}
	}
}

// TestPrintedOnlyWithItsCommand: the same bare words printed by a command
// that names no credential stay (a commit hash, a build id, a checksum).
func TestPrintedOnlyWithItsCommand(t *testing.T) {
	for _, c := range []struct{ cmd, out string }{
		{"git rev-parse HEAD", "3f9c2a1b7e4d5c6b8a9f0e1d2c3b4a5968778695\n"},
		{"sha256sum dist/app.tar.gz", "9b74c9897bac770ffc029102a200c5de0a1b2c3d4e5f60718293a4b5c6d7e8f9  dist/app.tar.gz\n"},
		{"grep -rn token src/", "src/auth.go:12: tokenizerV2Config := load()\n"},
		{"docker build -t app .", "Successfully built 4f2a9c81b7e3d5a6\n"},
		{"docker login --password-stdin -u bot registry.acme.dev", "Login Succeeded\n"},
		{"cat src/tokenizer.go", "package tokenizer\n"},
	} {
		if redact.PrintsSecret(c.cmd) {
			t.Errorf("%q seen as printing a credential", c.cmd)
		}
		if got, n := redact.Output(c.cmd, c.out); got != c.out || n != 0 {
			t.Errorf("%q: %q became %q", c.cmd, c.out, got)
		}
	}
}

func itoa2(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestPrintedNotFromScripts: a heredoc or an inline script whose code
// names a secret does not make its output a printed credential.
func TestPrintedNotFromScripts(t *testing.T) {
	for _, cmd := range []string{
		"python - <<'PY'\nfrom flask import Flask\napp.secret_key = 'secret'\nprint(app)\nPY",
		"python -c 'import os; print(os.environ[\"TOKEN\"][:4])'",
		"app.secret_key = 'x'",
		"It uses `settings.SECRET_KEY` if `secret` is `None`.\nI'll search for usages of `get_session_auth_hash`.",
	} {
		if redact.PrintsSecret(cmd) {
			t.Errorf("%q seen as printing a credential", cmd)
		}
	}
}
