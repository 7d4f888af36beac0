//go:build unix

package hooks

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkDecodePayload reads a Bash payload of 16 KiB and 256 KiB with
// decodePayload and with json.Unmarshal, side by side: their ratio is what
// keeping the tool_response aside saves.
func BenchmarkDecodePayload(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		p := bashPayload("s", "", "go test -v ./...", benchOutput(size))
		for _, c := range []struct {
			name   string
			decode func([]byte, *ccPayload) error
		}{{"decodePayload", decodePayload}, {"encoding-json", func(b []byte, p *ccPayload) error { return json.Unmarshal(b, p) }}} {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(p)))
				for b.Loop() {
					var q ccPayload
					if err := c.decode(p, &q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
