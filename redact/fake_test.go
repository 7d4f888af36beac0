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
