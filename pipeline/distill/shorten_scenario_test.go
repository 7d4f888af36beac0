package distill_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// scStep is one PostToolUse payload of a hook scenario, as Shorten sees it.
type scStep struct {
	tool, command, text string
}

// scCheck is the part of a scenario check Shorten can answer alone.
type scCheck struct {
	step          int
	byteIdentical bool
	contains      []string
	occurrencesLE []string
	facts         map[string]int
}

type scScenario struct {
	steps  []scStep
	checks []scCheck
}

// scString reads a scenario string value: a plain string or
// {"$repeat": s, "times": n, "then": tail}.
func scString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if r, ok := x["$repeat"].(string); ok {
			n, _ := x["times"].(float64)
			tail, _ := x["then"].(string)
			return strings.Repeat(r, int(n)) + tail
		}
	}
	return ""
}

func scStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, scString(e))
		}
		return out
	}
	return nil
}

// scParse reads the steps (what the model would read of each PostToolUse
// payload: Bash stdout plus "\n" + stderr when stderr is not empty, Read
// file content, Grep content) and the checks.
func scParse(t *testing.T, b []byte) scScenario {
	t.Helper()
	var raw struct {
		Steps []struct {
			Hook map[string]any `json:"hook"`
		} `json:"steps"`
		Checks []map[string]any `json:"checks"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var sc scScenario
	for _, st := range raw.Steps {
		var s scStep
		h := st.Hook
		if h != nil && h["hook_event_name"] == "PostToolUse" {
			s.tool, _ = h["tool_name"].(string)
			in, _ := h["tool_input"].(map[string]any)
			s.command = scString(in["command"])
			resp, _ := h["tool_response"].(map[string]any)
			switch s.tool {
			case "Bash":
				s.text = scString(resp["stdout"])
				if e := scString(resp["stderr"]); e != "" {
					s.text += "\n" + e
				}
			case "Read":
				file, _ := resp["file"].(map[string]any)
				s.text = scString(file["content"])
			default:
				s.text = scString(resp["content"])
			}
		}
		sc.steps = append(sc.steps, s)
	}
	for _, c := range raw.Checks {
		var k scCheck
		n, _ := c["step"].(float64)
		k.step = int(n)
		if v, ok := c["byte_identical_or_no_reply"].(bool); ok && v {
			k.byteIdentical = true
		}
		if v, ok := c["visible_equals_raw"].(bool); ok && v {
			k.byteIdentical = true
		}
		k.contains = scStrings(c["visible_contains"])
		k.occurrencesLE = scStrings(c["occurrences_le_raw"])
		if f, ok := c["facts"].(map[string]any); ok {
			k.facts = map[string]int{}
			for w, v := range f {
				switch x := v.(type) {
				case float64:
					k.facts[w] = int(x)
				case []any:
					if len(x) == 1 {
						if y, ok := x[0].(float64); ok {
							k.facts[w] = int(y)
						}
					}
				}
			}
		}
		sc.checks = append(sc.checks, k)
	}
	return sc
}
