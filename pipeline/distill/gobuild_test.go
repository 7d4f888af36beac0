package distill

import (
	"testing"
)

func TestGoDiagnostic(t *testing.T) {
	for _, s := range []string{"internal/store/store.go:26:9: cannot use o", "vet: notify/notify.go:23:1: missing return", "go.mod:3: unknown directive: foo"} {
		if !goDiagnostic(s) {
			t.Errorf("goDiagnostic(%q) = false", s)
		}
	}
	for _, s := range []string{"# example.com/x", "README.md:3:1: x", "go: downloading x v1"} {
		if goDiagnostic(s) {
			t.Errorf("goDiagnostic(%q) = true", s)
		}
	}
}
