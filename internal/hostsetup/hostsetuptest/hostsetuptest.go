// Package hostsetuptest holds the helpers the tests of host setup share
// (internal/hostsetup's own and cmd/omni's init and doctor tests): writing
// and reading a host's files, decoding a settings file, and listing omni's
// hook handlers in it. It imports the standard library only, so that
// hostsetup's in-package tests can use it; the hostsetup functions it needs
// are passed in.
package hostsetuptest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to path (mode 0644), making its directories;
// any error fails the test.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of path; any error fails the test.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Object decodes src with decode (hostsetup.DecodeJSONC) and returns the
// object it holds; anything else fails the test.
func Object(t testing.TB, src string, decode func([]byte) (any, error)) map[string]any {
	t.Helper()
	v, err := decode([]byte(src))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, src)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object:\n%s", src)
	}
	return m
}

// HandlersOf returns, for each event of a Claude Code style settings
// object ("hooks": {event: [{"matcher", "hooks": [handler]}]}), the
// handlers whose command isOmni accepts, each with its group's matcher
// added under "matcher".
func HandlersOf(doc map[string]any, isOmni func(command string) bool) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	hooks, _ := doc["hooks"].(map[string]any)
	for ev, groups := range hooks {
		gs, _ := groups.([]any)
		for _, g := range gs {
			gm, _ := g.(map[string]any)
			hs, _ := gm["hooks"].([]any)
			for _, h := range hs {
				hm, _ := h.(map[string]any)
				cmd, _ := hm["command"].(string)
				if isOmni(cmd) {
					c := map[string]any{"matcher": gm["matcher"]}
					for k, v := range hm {
						c[k] = v
					}
					out[ev] = append(out[ev], c)
				}
			}
		}
	}
	return out
}
