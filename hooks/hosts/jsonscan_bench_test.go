//go:build unix

package hosts

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodePayload reads a Bash payload of 16 KiB and 256 KiB with
// DecodePayload and with json.Unmarshal, side by side: their ratio is what
// keeping the tool_response aside saves.
func BenchmarkDecodePayload(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		p := benchBashPayload(benchLog(size))
		for _, c := range []struct {
			name   string
			decode func([]byte, *Payload) error
		}{{"DecodePayload", DecodePayload}, {"encoding-json", func(b []byte, p *Payload) error { return json.Unmarshal(b, p) }}} {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(p)))
				for b.Loop() {
					var q Payload
					if err := c.decode(p, &q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchBashPayload is a Claude Code PostToolUse payload of a Bash call
// whose stdout is stdout.
func benchBashPayload(stdout string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "go test -v ./..."},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}})
	return b
}

// benchLog is a test log of about n bytes.
func benchLog(n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&sb, "=== RUN   TestParseConfig/case_%03d\n", i)
		} else {
			fmt.Fprintf(&sb, "--- PASS: TestParseConfig/case_%03d (0.%02ds)\n", i, i%100)
		}
	}
	return sb.String()
}
