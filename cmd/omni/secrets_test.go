package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/redact/redacttest"
)

// secretPayload is redacttest.HookPayload for session s1, as a string.
func secretPayload(tool, event, cmd, text string) string {
	return string(redacttest.HookPayload("s1", tool, event, cmd, text))
}

// foundIn returns the values found in s, raw or JSON-escaped.
func foundIn(s string, values []string) []string { return redacttest.Found(s, values) }

// TestNoSecretReachesHome: every generated fake credential goes
// through every door of the CLI twice (omni hook for several tools and
// the failure event, a command carrying it, omni exec, pipe mode, omni
// distill); then no value is in what the model reads, in any file under
// $OMNI_HOME, in the decoded event log, or in stats, session, diff and
// replay output.
func TestNoSecretReachesHome(t *testing.T) {
	if testing.Short() {
		t.Skip("runs many in-process commands against a real store")
	}
	home := t.TempDir()
	t.Setenv("OMNI_HOME", home)
	t.Setenv("OMNI_NO_DAEMON", "1")
	t.Setenv("OMNI_KEEP_SECRETS", "")
	dir := t.TempDir()
	t.Chdir(dir)
	g := redacttest.New(0)
	t.Logf("seed %d", g.Seed)
	cases := g.Cases()
	omni := func(stdin string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		run(args, streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return out.String() + errb.String()
	}
	// One output holds every non-command case (each store open costs a
	// few tens of milliseconds here); the hooks package's test sends each
	// case alone through every door.
	var all []string
	kindOf := map[string]string{}
	var body strings.Builder
	var commands []redacttest.Case
	for _, c := range cases {
		for _, v := range c.Values {
			kindOf[v] = c.Kind
		}
		all = append(all, c.Values...)
		if c.Command {
			commands = append(commands, c)
			continue
		}
		for k := 0; k < 3; k++ {
			body.WriteString("config line " + c.Kind + " " + string(rune('a'+k)) + "\n")
		}
		body.WriteString(c.Text)
	}
	text := body.String()
	// A plain text (no JSON line, which the structured guard passes whole)
	// folds when repeated, so the log archives blocks holding redacted values.
	var plainB strings.Builder
	for k := 0; k < 40; k++ {
		plainB.WriteString("src/service/handler_" + string(rune('a'+k%26)) + string(rune('a'+k/26)) + ".go:12: func handle(w http.ResponseWriter, r *http.Request)\n")
	}
	for _, c := range cases {
		if c.Command || !strings.HasPrefix(c.Text, "using credential") && !strings.HasPrefix(c.Kind, "env") && c.Kind != "netrc" {
			continue
		}
		plainB.WriteString("plain " + c.Kind + "\n" + c.Text)
	}
	plain := plainB.String()
	f := filepath.Join(dir, "config.txt")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(door, seen string, values []string) {
		t.Helper()
		for _, v := range foundIn(seen, values) {
			t.Errorf("%s through %s: the model reads %q", kindOf[v], door, v)
		}
	}
	for round := 0; round < 2; round++ {
		for _, c := range commands {
			check("hook (command)", omni(secretPayload("Bash", "PostToolUse", c.Text, "done\n"), "hook"), c.Values)
			check("exec (command)", omni("", "exec", "--session", "s1", "--", "echo done || "+c.Text), c.Values)
			check("distill (command)", omni("done\n", "distill", "--session", "s1", "--command", c.Text), c.Values)
		}
		for _, tool := range []string{"Bash", "Read", "Grep", "WebFetch", "mcp__db__query"} {
			reply := omni(secretPayload(tool, "PostToolUse", "cat config", text), "hook")
			if reply == "" {
				t.Errorf("through %s: no reply, the host shows the raw output", tool)
			}
			check("hook "+tool, reply, all)
		}
		omni(secretPayload("Bash", "PostToolUseFailure", "make deploy", text), "hook")
		// (Grep: a redacted Bash output opens with the redaction marker,
		// and a text holding a marker is not folded.)
		check("hook Grep (plain)", omni(secretPayload("Grep", "PostToolUse", "", plain), "hook"), all)
		check("pipe (plain)", omni(plain, "--session", "s1"), all)
		check("exec", omni("", "exec", "--session", "s1", "--", "cat", f), all)
		check("exec stderr", omni("", "exec", "--session", "s1", "--", "cat "+f+" >&2"), all)
		check("pipe", omni(text, "--session", "s1"), all)
		check("pipe without a session", omni(text), all)
		check("distill", omni(text, "distill", "--session", "s1", "--command", "cat config"), all)
	}
	// Reports.
	for _, args := range [][]string{{"stats"}, {"stats", "--json"}, {"session"}, {"session", "--history", "--all"},
		{"diff"}, {"diff", "--json"}, {"replay", "--verify"}} {
		if l := foundIn(omni("", args...), all); len(l) > 0 {
			t.Errorf("omni %s prints %q", strings.Join(args, " "), l)
		}
	}
	files, inputs, blocks := scanHome(t, home, all)
	if inputs == 0 || blocks == 0 {
		t.Fatalf("%d inputs, %d blocks recorded: the test proves nothing", inputs, blocks)
	}
	t.Logf("%d cases, %d files under OMNI_HOME, %d inputs and %d blocks in the log", len(cases), files, inputs, blocks)
}

// scanHome reports (t.Errorf) every value of values found in a file under
// home, as bytes, or in the event log, decoded (compressed inputs and
// archived blocks as text), and returns how many files, inputs and blocks
// it read.
func scanHome(t *testing.T, home string, values []string) (files, inputs, blocks int) {
	t.Helper()
	// Every file under $OMNI_HOME, as bytes.
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		files++
		t.Logf("scanned %s (%d bytes)", strings.TrimPrefix(p, home), len(b))
		if l := foundIn(string(b), values); len(l) > 0 {
			t.Errorf("%s holds %q", p, l)
		}
		return nil
	})
	// The log, decoded: compressed inputs and archived blocks as text.
	st, err := jetstream.Open(context.Background(), jetstream.Options{Dir: filepath.Join(home, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	err = st.Read(context.Background(), 0, func(ev events.Event) error {
		b, _ := json.Marshal(ev)
		s := string(b)
		if ev.Invoked != nil && ev.Invoked.Codec == events.CodecZstd {
			in, err := dec.DecodeAll(ev.Invoked.Input, nil)
			if err != nil {
				t.Fatalf("decode input: %v", err)
			}
			s += string(in)
			inputs++
		}
		if ev.Archived != nil && ev.Archived.Codec == events.CodecZstd {
			in, err := dec.DecodeAll(ev.Archived.Data, nil)
			if err != nil {
				t.Fatalf("decode block: %v", err)
			}
			s += string(in)
			blocks++
		}
		if l := foundIn(s, values); len(l) > 0 {
			t.Errorf("event %d.%d (%s) holds %q", ev.Seq, ev.Index, ev.Kind, l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, inputs, blocks
}
