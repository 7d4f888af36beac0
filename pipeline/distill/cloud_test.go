package distill

import (
	"testing"
)

func TestKlogAndResults(t *testing.T) {
	if m, ok := klogMessage(`E1129 13:01:39.931291   23669 memcache.go:265] "Unhandled Error"`); !ok || m != `"Unhandled Error"` {
		t.Errorf("klog: %q %v", m, ok)
	}
	if _, ok := klogMessage("Error from server (NotFound)"); ok {
		t.Error("klog: a plain error taken for a log line")
	}
	for _, s := range []string{"deployment.apps/web configured", `pod "web-1" deleted`, "service/web unchanged (server dry run)",
		`pod "web-1" deleted from default namespace`, `deployment "web" successfully rolled out`, "deployment.apps/web condition met"} {
		if !kubectlResult(s) {
			t.Errorf("kubectlResult(%q) = false", s)
		}
	}
	for _, s := range []string{"Warning: x configured", "error: deployment/web not found", "configured"} {
		if kubectlResult(s) {
			t.Errorf("kubectlResult(%q) = true", s)
		}
	}
}
