package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerSurvivesAnyInput: a batch array, an object id, a float id, a
// line that is not JSON, no version, and a line over MaxLine (and over the
// SDK's own cap) each get an error answer or none, and every well-formed
// request around them is answered.
func TestServerSurvivesAnyInput(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"omni_retrieve","arguments":{"handle":"` +
		strings.Repeat("a", mcp.DefaultMaxLineLength+10) + `"}}}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":50,"method":"tools/list"},{"jsonrpc":"2.0","id":51,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`not json at all`,
		`{"id":60,"method":"tools/list"}`,
		`[]`,
		`{"jsonrpc":"2.0","id":61,"method":7}`,
		huge,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"omni_explain_savings","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
	}
	var out bytes.Buffer
	d := NewDrain(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := New(&fakeStore{}, "v-test", Options{}).Run(ctx, &mcp.IOTransport{Reader: d, Writer: d})
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("server ended with %v", err)
	}
	answered := map[string]bool{}
	errs := 0
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error *struct{}       `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		if r.Error != nil {
			errs++
		}
		answered[string(r.ID)] = r.Error == nil
	}
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		if !answered[id] {
			t.Errorf("request %s not answered (answers: %v)", id, answered)
		}
	}
	if errs < 7 {
		t.Errorf("%d error answers for 9 malformed lines:\n%s", errs, out.String())
	}
}
