package events

import "testing"

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"s-123/agent-7":         "s-123/agent-7",
		"café":                  "café",
		"a\x1b]52;c;SGVsbG8=\a": `a\x1b]52;c;SGVsbG8=\a`,
		"x\ny 2026 forged line": `x\ny 2026 forged line`,
		"\x1b[2J\x9b\u009b":     `\x1b[2J\x9b\u009b`,
		"rtl\u202eexe":          `rtl\u202eexe`,
		"bad\xffbyte":           `bad\xffbyte`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
