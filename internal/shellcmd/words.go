package shellcmd

import "strings"

// LeadingWords splits the first simple command of a shell command line into
// words and returns at most n of them. Words are separated by blanks (space,
// tab); single and double quotes group a word and are removed (no escapes
// inside them); a newline, ';', '&' or '|' ends the command. Backslashes,
// variables and substitutions are kept as written. An unterminated quote
// runs to the end of the line.
func LeadingWords(cmd string, n int) []string {
	var out []string
	var cur strings.Builder
	quote := byte(0)
	in := false
	for i := 0; i < len(cmd) && len(out) < n; i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\n' || c == ';' || c == '&' || c == '|':
			if in {
				out = append(out, cur.String())
			}
			return out
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in && len(out) < n {
		out = append(out, cur.String())
	}
	return out
}

// Split splits a whole command line into words on blanks (space, tab,
// newline), honouring single quotes, double quotes (inside which a backslash
// escapes the next byte) and backslashes outside quotes; quotes and escaping
// backslashes are removed. Operators (;, &&, |) are not special: they are
// words or parts of words. It reads back what Quote writes:
// Split(Quote(a) + " " + Quote(b)) is [a b] for any a and b.
func Split(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Quote returns s as one word for a POSIX shell: unchanged when it is
// non-empty and holds only letters, digits and -_./=:,+@%; otherwise in
// single quotes, each ' written as '\”.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// IsAssignment reports whether a word is a variable assignment NAME=value
// (FOO=bar before a command): NAME is a letter or '_' followed by letters,
// digits and '_'; the value may be empty.
func IsAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for k := 0; k < eq; k++ {
		c := w[k]
		if !(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (k > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// Base returns the last element of a program path ("/usr/bin/git" → "git"),
// case and suffix kept; a word without '/' is returned as is.
func Base(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
