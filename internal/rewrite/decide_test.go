package rewrite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func rules(allow, ask, deny []string) *Rules {
	r := &Rules{}
	for _, x := range allow {
		r.Allow = append(r.Allow, ParseRule(x))
	}
	for _, x := range ask {
		r.Ask = append(r.Ask, ParseRule(x))
	}
	for _, x := range deny {
		r.Deny = append(r.Deny, ParseRule(x))
	}
	return r
}

func TestShapeNarrow(t *testing.T) {
	take := []string{"go test ./...", "pytest -x tests/test_a.py", "python -m pytest -q", "cargo test --all",
		"npm test", "npm run test:unit", "pnpm run build", "make", "make -j4 check", "cd web && npm test",
		"cd /p/sub && pytest -v 2>&1", "go build ./... && go test ./...", "timeout 300 go test ./...",
		"uv run pytest", "./gradlew build", "FOO=1 go test ./x"}
	for _, c := range take {
		if _, ok := Shape(c, Narrow); !ok {
			t.Errorf("narrow form left %q", c)
		}
	}
	leave := []string{"", "ls -la", "cat go.mod", "git push", "go test ./... | tail -5", "go test > log.txt",
		"go test ./... &", "sleep 5 & go test", "echo $(go test)", "go test `x`", "(go test)", "for i in 1; do make; done",
		"go run .", "cargo run", "npm install", "omni exec go test", "cd x", "go test && git push", "diff <(a) <(b)"}
	for _, c := range leave {
		if _, ok := Shape(c, Narrow); ok {
			t.Errorf("narrow form took %q", c)
		}
	}
	for _, c := range []string{"ls *.{py,sh}", "git log | head", "cat a 2>&1"} {
		if _, ok := Shape(c, All); !ok {
			t.Errorf("all form left %q", c)
		}
	}
	if _, ok := Shape("ls &", All); ok {
		t.Error("all form took a backgrounded job")
	}
}

// The hazards measured on Claude Code 2.1.328: a deny rule stopped
// protecting a secret file and a push once the command was rewritten.
func TestDecideDenyAndAsk(t *testing.T) {
	rs := rules([]string{"Bash"}, []string{"Bash(npm publish:*)"},
		[]string{"Bash(cat secret.txt)", "Bash(git push:*)", "Read(./.env)", "Read(**/credentials/**)", "Bash(rm *)"})
	for _, c := range []string{"cat secret.txt", "cat  secret.txt", "git push origin main", "git push",
		"cat .env", "cat config/.env", "head -3 ./.env", "cat a/credentials/k.json", "rm -rf x", "npm publish",
		"cd x && git push", "timeout 5 git push", "sudo git push", "cat 'secret.txt'", "go test ./... && cat secret.txt"} {
		for _, mode := range []string{BypassMode, "default"} {
			if d := Decide(Call{Command: c, Mode: mode}, rs, All); d.Rewrite {
				t.Errorf("%s: %q rewritten (%s)", mode, c, d.Why)
			}
		}
	}
	if d := Decide(Call{Command: "go test ./...", Mode: BypassMode}, rs, Narrow); !d.Rewrite || d.Allow {
		t.Errorf("go test under bypass: %+v", d)
	}
	if d := Decide(Call{Command: "cat secret.txt", Mode: BypassMode}, rules(nil, nil, []string{"Bash"}), All); d.Rewrite {
		t.Error("a bare Bash deny rule did not stop the rewrite")
	}
	if d := Decide(Call{Command: "ls", Mode: BypassMode}, rules(nil, nil, []string{"Read"}), All); d.Rewrite {
		// "ls" has no argument: a bare Read rule concerns no word of it.
		t.Logf("bare Read rule: %+v", d)
	}
	if d := Decide(Call{Command: "cat x", Mode: BypassMode}, rules(nil, nil, []string{"Read"}), All); d.Rewrite {
		t.Error("a bare Read deny rule did not stop a read")
	}
}

// Outside bypass mode only what an allow rule permits is rewritten, and
// the reply then allows it (else the rewritten command would ask).
func TestDecideAllow(t *testing.T) {
	rs := rules([]string{"Bash(go test:*)", "Bash(npm run test:*)", "Bash(make check)", "Bash(pytest *)"}, nil, nil)
	for _, c := range []string{"go test ./...", "go test", "npm run test -- -t x", "make check", "pytest -x", "cd sub && go test ./x"} {
		d := Decide(Call{Command: c, Mode: "default", ProjectDir: "/p"}, rs, Narrow)
		if !d.Rewrite || !d.Allow {
			t.Errorf("%q: %+v", c, d)
		}
	}
	for _, c := range []string{"go build ./...", "make", "make check -j2", "go testx", "cd /elsewhere && go test", "cd ../x && go test",
		"go test && go build"} {
		if d := Decide(Call{Command: c, Mode: "default", ProjectDir: "/p"}, rs, Narrow); d.Rewrite {
			t.Errorf("%q rewritten without an allow rule: %+v", c, d)
		}
	}
	if d := Decide(Call{Command: "cd /p/sub && go test", Mode: "acceptEdits", ProjectDir: "/p"}, rs, Narrow); !d.Rewrite {
		t.Errorf("cd inside the project: %+v", d)
	}
	if d := Decide(Call{Command: "go test", Mode: "plan"}, rs, Narrow); d.Rewrite {
		t.Error("plan mode rewritten")
	}
	if d := Decide(Call{Command: "go test", Mode: BypassMode, Background: true}, rs, Narrow); d.Rewrite || d.Why != "background" {
		t.Errorf("background: %+v", d)
	}
	if d := Decide(Call{Command: "go test", Mode: BypassMode}, nil, Narrow); d.Rewrite {
		t.Error("unreadable settings: rewritten")
	}
	if d := Decide(Call{Command: "go test > out.txt", Mode: "default"}, rules([]string{"Bash"}, nil, nil), All); d.Rewrite {
		t.Error("a write to a file rewritten outside bypass mode")
	}
}

func TestBashRuleSyntax(t *testing.T) {
	for _, c := range []struct {
		rule, cmd string
		allows    bool
	}{
		{"npm test:*", "npm test", true}, {"npm test:*", "npm test -- x", true}, {"npm test:*", "npm tests", false},
		{"ls *", "ls -la", true}, {"ls *", "lsof", false}, {"ls*", "lsof", true}, {"git * main", "git push origin main", true},
		{"make check", "make check", true}, {"make check", "make check2", false}, {"", "anything", true},
	} {
		if got := bashAllows(c.rule, c.cmd); got != c.allows {
			t.Errorf("bashAllows(%q, %q) = %v", c.rule, c.cmd, got)
		}
		if c.allows && !bashCouldMatch(c.rule, c.cmd) {
			t.Errorf("bashCouldMatch(%q, %q) is not a superset of bashAllows", c.rule, c.cmd)
		}
	}
}

func TestLoadMerges(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) string {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := write("home/.claude/settings.json", `{"permissions":{"allow":["Bash(go test:*)"],"deny":["Bash(git push:*)"]}}`)
	write("proj/.claude/settings.json", `{"permissions":{"ask":["Bash(make:*)"]}}`)
	write("proj/.claude/settings.local.json", `{"permissions":{"deny":["Read(./.env)"],"allow":["Bash(cargo test:*)"]}}`)
	write("proj/sub/.claude/settings.json", `{"permissions":{"allow":["Bash(rm:*)"],"deny":["Bash(curl:*)"]}}`)
	managed := write("etc/managed-settings.json", `{"permissions":{"deny":["Bash(sudo:*)"]}}`)
	r, err := Load(Sources{User: user, Project: []string{filepath.Join(dir, "proj"), filepath.Join(dir, "proj/sub")}, Managed: []string{managed, filepath.Join(dir, "none.json")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Deny) != 4 || len(r.Ask) != 1 || len(r.Allow) != 2 || len(r.Files) != 5 {
		t.Fatalf("merged %d deny, %d ask, %d allow from %v", len(r.Deny), len(r.Ask), len(r.Allow), r.Files)
	}
	for _, a := range r.Allow {
		if a.Content == "rm:*" {
			t.Fatal("an allow rule of a subdirectory's settings was taken")
		}
	}
	write("etc/managed-settings.json", `{"allowManagedPermissionRulesOnly":true,"permissions":{"allow":["Bash(ls)"]}}`)
	if r, _ = Load(Sources{User: user, Managed: []string{managed}}); len(r.Allow) != 1 || r.Allow[0].Content != "ls" {
		t.Fatalf("managed-only allow: %v", r.Allow)
	}
	bad := write("proj/.claude/settings.local.json", `{"permissions":{"deny":[`)
	if _, err := Load(Sources{Project: []string{filepath.Dir(filepath.Dir(bad))}}); !errors.Is(err, ErrSettings) {
		t.Fatalf("a broken settings file: %v", err)
	}
	s := SourcesFor("/p/sub", func(k string) string {
		return map[string]string{"HOME": "/h", "CLAUDE_PROJECT_DIR": "/p"}[k]
	})
	if s.User != "/h/.claude/settings.json" || len(s.Project) != 2 || s.Project[0] != "/p" {
		t.Fatalf("sources %+v", s)
	}
}
