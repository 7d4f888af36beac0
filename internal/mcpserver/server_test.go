package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnictx/omni/hooks"
)

// fakeStore serves fixed blocks and recent calls.
type fakeStore struct {
	blocks   map[string][]byte
	recent   []hooks.Recent
	asked    []string
	calls    []hooks.CallInput
	failCall bool
}

func (f *fakeStore) Retrieve(_ context.Context, h string) ([]byte, error) {
	f.asked = append(f.asked, h)
	if b, ok := f.blocks[h]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("retrieve %s: %w", h, hooks.ErrUnknownHandle)
}

func (f *fakeStore) Recent(_ context.Context, n int) ([]hooks.Recent, error) {
	return f.recent[:min(n, len(f.recent))], nil
}

func (f *fakeStore) Stats(context.Context) ([]byte, error) { return nil, errors.New("store closed") }

// Call folds nothing: it records what it was asked and returns the text
// with a prefix, or fails when failCall is set.
func (f *fakeStore) Call(_ context.Context, in hooks.CallInput) (string, error) {
	f.calls = append(f.calls, in)
	if f.failCall {
		return "", errors.New("daemon gone")
	}
	return "piped:" + in.Text, nil
}

// connect serves store in memory and returns a client session.
func connect(t *testing.T, store Store, all bool) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	opt := Options{}
	if all {
		opt.Extra = ParseTools("all")
	}
	ss, err := New(store, "v-test", opt).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(r.Content) != 1 {
		t.Fatalf("%s: %d content items", name, len(r.Content))
	}
	switch c := r.Content[0].(type) {
	case *mcp.TextContent:
		return c.Text, r.IsError
	case *mcp.EmbeddedResource:
		return "blob:" + c.Resource.URI + ":" + string(c.Resource.Blob), r.IsError
	}
	t.Fatalf("%s: content %T", name, r.Content[0])
	return "", false
}

func TestServerTools(t *testing.T) {
	const h, bin = "0123456789abcdef", "fedcba9876543210"
	store := &fakeStore{
		blocks: map[string][]byte{h: []byte("line one\nline two\n"), bin: {0xff, 0xfe, 'x'}},
		recent: []hooks.Recent{{Time: "12:00:00", Reader: "s1", Tool: "Bash", Source: "go test ./...", RawBytes: 1000, DeliveredBytes: 250, Changed: true,
			Folds: []hooks.RecentFold{{Marker: "[OMNI: 3 lines already shown]", Lines: 3, Bytes: 750, Handle: h}}}},
	}
	cs := connect(t, store, false)
	if info := cs.InitializeResult().ServerInfo; info.Name != "omni" || info.Version != "v-test" {
		t.Fatalf("server info %+v", info)
	}
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(lt.Tools) != 2 {
		t.Fatalf("tools %v %v", lt, err)
	}
	for _, tc := range []struct {
		handle, want string
		isErr        bool
	}{
		{h, "line one\nline two\n", false},
		{`omni_retrieve("0123456789ABCDEF")`, "line one\nline two\n", false},
		{bin, "blob:omni://retrieve/" + bin + ":\xff\xfex", false},
		{"1111111111111111", "no archived content for 1111111111111111", true},
		{"0000000000000000", "0000000000000000 is the documentation example", true},
		{"xyz", `"xyz" is not a handle`, true},
	} {
		// Arguments a host adds beside the tool's own are ignored.
		got, isErr := callText(t, cs, "omni_retrieve", map[string]any{"handle": tc.handle, "_reason": "host extra"})
		if !strings.HasPrefix(got, tc.want) || isErr != tc.isErr {
			t.Errorf("retrieve %q = %q (error %v), want %q (error %v)", tc.handle, got, isErr, tc.want, tc.isErr)
		}
	}
	if len(store.asked) != 4 {
		t.Errorf("the store was asked %v: the example and a non-handle must not reach it", store.asked)
	}
	got, isErr := callText(t, cs, "omni_explain_savings", map[string]any{"n": 5})
	if isErr || !strings.HasPrefix(got, "last 1 calls: 1000 B produced, 250 B read by the model (75% saved)\n") ||
		!strings.Contains(got, "omni retrieve "+h) {
		t.Errorf("explain:\n%s", got)
	}
	// omni_stats only on request; a store error is a tool error.
	cs = connect(t, store, true)
	if got, isErr := callText(t, cs, "omni_stats", nil); !isErr || got != "omni_stats: store closed" {
		t.Errorf("stats = %q (error %v)", got, isErr)
	}
}
