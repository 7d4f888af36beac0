package shellcmd

import "testing"

func TestFileRead(t *testing.T) {
	for cmd, want := range map[string]string{
		"cat foo.py":                             "foo.py",
		"cat -n src/a.go":                        "src/a.go",
		"head -n 50 a.txt":                       "a.txt",
		"head -50 a.txt":                         "a.txt",
		"tail -n +10 'b c.txt'":                  "b c.txt",
		"sed -n '10,20p' x/y.py":                 "x/y.py",
		"nl -ba x.py | sed -n '1,40p'":           "x.py",
		"cd /testbed && cat django/db.py":        "/testbed/django/db.py",
		"cd /testbed && sed -n 5p ./a.py":        "/testbed/a.py",
		"cat a b":                                "",
		"cat a | grep x":                         "",
		"python3 a.py":                           "",
		"cat $F":                                 "",
		"cat a; cat b":                           "",
		"cd /x && cat a && cat b":                "",
		"sed -i 's/a/b/' f":                      "",
		"cat <<'EOF' > f.py\nprint(1)\nEOF":      "",
		"grep -n foo bar.py":                     "",
		"head -n 5 a.txt | tail -n 2":            "a.txt",
		"git show HEAD:a.go":                     "",
		"cat -n a.go | head -n 20 | nl":          "a.go",
		"cd dir && python -c 'print(1)'":         "",
		"less README.md":                         "README.md",
		"tail -f log.txt":                        "log.txt",
		"cat":                                    "",
		"sed -n '/start/,/end/p' f":              "",
		"nl -ba f | sed -n '10,20p' | head -n 5": "f",
		"cd /a/b && cat ../c.txt":                "/a/c.txt",
		"cat /etc/hosts":                         "/etc/hosts",
		"omni retrieve 0123456789abcdef":         "",
		"OMNI_PASSTHROUGH=1 cat f":               "",
		"cat f || true":                          "",
		"head -c 100 f":                          "f",
	} {
		if got := FileRead(cmd); got != want {
			t.Errorf("FileRead(%q) = %q, want %q", cmd, got, want)
		}
	}
}
