package rewrite

import "testing"

// FuzzCouldMatchCoversAllows: a deny or ask rule is read as a superset of
// what it matches, so whatever a rule would allow, the same rule as a deny
// rule stops the rewrite; and a bare Bash deny rule stops every rewrite.
func FuzzCouldMatchCoversAllows(f *testing.F) {
	for _, s := range [][2]string{{"git push:*", "git push origin"}, {"ls *", "ls -la"}, {"cat secret.txt", "cat secret.txt"},
		{"npm run *:*", "npm run a:b"}, {"* main", "git push main"}, {"a  b", "a b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, rule, cmd string) {
		if bashAllows(rule, cmd) && !bashCouldMatch(rule, cmd) {
			t.Fatalf("rule %q allows %q but as a deny rule could not match it", rule, cmd)
		}
		for _, mode := range []string{BypassMode, "default"} {
			if d := Decide(Call{Command: cmd, Mode: mode}, &Rules{Deny: []Rule{{Tool: "Bash"}}}, All); d.Rewrite {
				t.Fatalf("%s: %q rewritten under a bare Bash deny rule", mode, cmd)
			}
			r := &Rules{Deny: []Rule{{Tool: "Bash", Content: rule}}, Allow: []Rule{{Tool: "Bash"}}}
			if d := Decide(Call{Command: cmd, Mode: mode}, r, All); d.Rewrite && bashAllows(rule, cmd) {
				t.Fatalf("%s: %q rewritten although the deny rule %q matches it", mode, cmd, rule)
			}
		}
	})
}
