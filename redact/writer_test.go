package redact

import (
	"bytes"
	"strings"
	"testing"
)

// A line over the piece size is cut where no credential can stand: a token
// right after the first megabyte is still masked.
func TestWriterLongLineKeepsTokenWhole(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	tok := "ghp_" + "Zq8vT1mR4kP2nX7wL9sB3dF6hJ0cV5yG2aQ8"
	line := strings.Repeat("x", writerMaxLine-10) + " " + tok + " done\n"
	for i := 0; i < len(line); i += 4096 {
		end := i + 4096
		if end > len(line) {
			end = len(line)
		}
		if _, err := w.Write([]byte(line[i:end])); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	if strings.Contains(out.String(), tok) {
		t.Fatal("a token across the piece boundary passed unmasked")
	}
	if out.Len() < writerMaxLine {
		t.Fatalf("output lost: %d bytes", out.Len())
	}
}
