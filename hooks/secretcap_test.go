package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// genToken returns a GitHub-token-shaped credential with a pseudo-random
// body (seeded: the test is deterministic), never an example value.
func genToken(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("ghp_")
	for i := 0; i < 36; i++ {
		b = append(b, alnum[r.IntN(len(alnum))])
	}
	return string(b)
}

// fillTo returns lines of unique text after head, padded to exactly n
// characters (ASCII).
func fillTo(head string, n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "row %05d: the quick brown fox jumps over the lazy dog\n", i)
	}
	return b.String()[:n-1] + "\n"
}

// A credential in an output the host shows whole must not reach the model
// because the redacted reply (masks and notice) grows past the host's
// 30,000-character cap: omni replies anyway (the host persists such a
// reply and previews it), never leaving the host its own unredacted text.
// Red when the reply is withheld at the cap.
func TestSecretNearHostCapStillRedacted(t *testing.T) {
	tok := genToken(7)
	// Short passwords: each mask is longer than the value it hides.
	var many strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&many, "db%03d password=q%03dz\n", i, i)
	}
	cases := map[string]string{
		"notice pushes it over": fillTo("export GITHUB_TOKEN="+tok+"\n", HostOutputCap-4),
		"masks grow it over":    fillTo(many.String(), HostOutputCap-60),
	}
	for name, out := range cases {
		t.Run(name, func(t *testing.T) {
			if n := utf8.RuneCountInString(out); n >= HostOutputCap {
				t.Fatalf("fixture is %d chars: the host would persist it", n)
			}
			e, _ := newTestEngine(t)
			x := withValue(t, hostsClaudeBash, "tool_input.command", "./show-env")
			x = withValue(t, string(x), "tool_response.stdout", out)
			r, err := e.HookResult(context.Background(), HookInput{Stdin: x})
			if err != nil {
				t.Fatal(err)
			}
			if r.Reply == nil {
				t.Fatalf("no reply (reason %q): the host shows its own text, credentials included", r.Reason)
			}
			if bytes.Contains(r.Reply, []byte("ghp_")) || bytes.Contains(r.Reply, []byte("password=q")) && !bytes.Contains(r.Reply, []byte("password=[REDACTED]")) {
				t.Fatalf("a credential reached the reply")
			}
			var reply struct {
				HSO struct {
					Out struct{ Stdout string } `json:"updatedToolOutput"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(r.Reply, &reply); err != nil {
				t.Fatal(err)
			}
			if utf8.RuneCountInString(reply.HSO.Out.Stdout) < HostOutputCap {
				return // shown inline: a repeat may fold it
			}
			// The host persists a reply that long and shows a preview:
			// nothing of it was shown, so a repeat folds nothing.
			r, err = e.HookResult(context.Background(), HookInput{Stdin: x})
			if err != nil || r.Reply == nil || bytes.Contains(r.Reply, []byte("omni retrieve")) {
				t.Fatalf("the repeat (err %v) claims lines the model only had as a preview: %.300s", err, r.Reply)
			}
		})
	}
}

// The same for an output the host persisted (over its cap): when the
// redacted whole output is still over the cap, the redacted text is the
// reply (the host previews it) instead of the host's preview of the
// original. Red when a persisted output with a credential gets no reply.
func TestSecretInPersistedOutputRedacted(t *testing.T) {
	tok := genToken(11)
	full := fillTo("Authorization: token "+tok+"\n", 3*HostOutputCap)
	path := filepath.Join(t.TempDir(), "persisted.txt")
	if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	x := withValue(t, hostsClaudeBash, "tool_input.command", "./dump")
	x = withValue(t, string(x), "tool_response.stdout", full[:HostOutputCap])
	x = withValue(t, string(x), "tool_response.persistedOutputPath", path)
	x = withValue(t, string(x), "tool_response.persistedOutputSize", len(full))
	e, _ := newTestEngine(t)
	r, err := e.HookResult(context.Background(), HookInput{Stdin: x})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reply == nil || bytes.Contains(r.Reply, []byte(tok)) {
		t.Fatalf("reply %d bytes (reason %q): the model would read the host's unredacted preview", len(r.Reply), r.Reason)
	}
}
