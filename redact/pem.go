package redact

import "strings"

// pemLabel reports whether the PEM label between "-----BEGIN " and "-----"
// names private key material (RSA/EC/DSA/OPENSSH/ENCRYPTED PRIVATE KEY, PGP
// PRIVATE KEY BLOCK).
func pemLabel(label string) bool {
	return strings.Contains(label, "PRIVATE KEY") || strings.Contains(label, "SECRET KEY")
}

// pemSpans finds private key headers in a line. A header with nothing after
// it starts a multi-line body (st.inPEM; the lines below are body lines
// until the END line or the first line that is not base64: a truncated key
// loses its body too). A header followed by more on the same line is a key
// on one line, in any encoding (blanks, literal \n escapes of a JSON or
// YAML string, double escapes): everything from the header to its END, or
// to the last body byte, is replaced.
func pemSpans(line string, st *lineState, out []span) []span {
	from := 0
	for {
		k := strings.Index(line[from:], "-----BEGIN ")
		if k < 0 {
			return out
		}
		ls := from + k + len("-----BEGIN ")
		le := strings.Index(line[ls:], "-----")
		if le < 0 || le > 64 {
			return out
		}
		label := line[ls : ls+le]
		he := ls + le + len("-----")
		from = he
		if !pemLabel(label) {
			continue
		}
		if strings.TrimSpace(line[he:]) == "" {
			st.inPEM, st.pemCounted = true, false
			return out
		}
		bs := he
		e := bs
		for e < len(line) {
			c := line[e]
			if c == '-' && strings.HasPrefix(line[e:], "-----END") {
				break
			}
			if c == '\\' && e+1 < len(line) && strings.IndexByte("nrt\\/", line[e+1]) >= 0 {
				e += 2
				continue
			}
			if isAlnum(c) || c == '+' || c == '/' || c == '=' || c == ' ' || c == '\t' || c == ':' || c == ',' || c == '-' {
				e++
				continue
			}
			break
		}
		// Keep leading and trailing escapes and blanks: the key's frame
		// reads as it was.
		for bs < e && (line[bs] == ' ' || line[bs] == '\t' || line[bs] == '\\' && bs+1 < e) {
			if line[bs] == '\\' {
				bs += 2
			} else {
				bs++
			}
		}
		for e > bs && (line[e-1] == ' ' || line[e-1] == '\t') {
			e--
		}
		for e-2 >= bs && line[e-2] == '\\' && strings.IndexByte("nrt", line[e-1]) >= 0 && (e-3 < bs || line[e-3] != '\\') {
			e -= 2
		}
		if e > bs && hasB64Run(line[bs:e]) {
			out = append(out, span{bs, e, "pem"})
		}
		from = max(e, he)
	}
}

// hasB64Run reports at least 4 consecutive base64 bytes (a body, not just
// escapes or blanks).
func hasB64Run(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) || s[i] == '+' || s[i] == '/' {
			run++
			if run >= 4 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// pemBodyLine handles a line inside a multi-line private key. It returns
// done=true when the line is not part of the body (the key ended above,
// truncated) and must be scanned as any other line.
func pemBodyLine(line string, st *lineState, out []span) ([]span, bool) {
	p := skipLinePrefix(line)
	if p == 0 {
		p = numberedPrefix(line)
	}
	for p < len(line) && (line[p] == ' ' || line[p] == '\t') {
		p++
	}
	e := len(line)
	for e > p && (line[e-1] == ' ' || line[e-1] == '\t') {
		e--
	}
	content := line[p:e]
	if k := strings.Index(content, "-----END "); k >= 0 {
		st.inPEM = false
		body := strings.TrimRight(content[:k], " \t")
		if body != "" && pemBody(body) {
			out = append(out, bodySpan(p, p+len(body), st))
		}
		return out, false
	}
	if content == "" {
		return out, false
	}
	if strings.HasPrefix(content, "Proc-Type:") || strings.HasPrefix(content, "DEK-Info:") || strings.HasPrefix(content, "Comment:") ||
		strings.HasPrefix(content, "Version:") {
		return out, false
	}
	if !pemBody(content) {
		st.inPEM = false
		return out, true
	}
	return append(out, bodySpan(p, e, st)), false
}

// bodySpan is the span of one body line: counted once per block.
func bodySpan(s, e int, st *lineState) span {
	kind := ""
	if !st.pemCounted {
		kind, st.pemCounted = "pem", true
	}
	return span{s, e, kind}
}

// pemBody reports a line of base64 (a PEM body line; a trailing "\" or a
// closing quote of a string concatenation is allowed).
func pemBody(s string) bool {
	s = strings.TrimRight(s, "\\\"',+ ")
	s = strings.TrimLeft(s, "\"'")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// skipLinePrefix returns the length of a line-number prefix: a Read
// result's "   12→", cat -n's "    12\t", or grep -n's "path:12:" or
// "path-12-".
func skipLinePrefix(s string) int {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	d := i
	for d < len(s) && isDigit(s[d]) {
		d++
	}
	if d > i {
		if strings.HasPrefix(s[d:], "→") {
			return d + len("→")
		}
		if d < len(s) && s[d] == '\t' {
			return d + 1
		}
	}
	// grep -n: a path without blanks, then :N: or -N-
	for k := 0; k < len(s) && k < 256; k++ {
		c := s[k]
		if c == ' ' || c == '\t' || c == '=' || c == '"' || c == '\'' {
			return 0
		}
		if (c == ':' || c == '-') && k > 0 {
			e := k + 1
			for e < len(s) && isDigit(s[e]) {
				e++
			}
			if e > k+1 && e < len(s) && s[e] == c {
				return e + 1
			}
		}
	}
	return 0
}

// numberedPrefix returns the length of a line number a viewer prints
// before a line other than cat -n's tab (less -N's "     12 ", bat's
// "  12 │ ", nl -s': ' or awk's "12: "): blanks, digits, then a blank or
// one of ":", ")", "|", "│" and blanks. It is only asked inside a private
// key's body, where a line of digits and a separator is never base64.
func numberedPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	d := i
	for d < len(s) && isDigit(s[d]) {
		d++
	}
	if d == i || d >= len(s) {
		return 0
	}
	e := d
	switch {
	case s[e] == ':' || s[e] == ')' || s[e] == '|' || s[e] == '.':
		e++
	case strings.HasPrefix(s[e:], "│"):
		e += len("│")
	case s[e] != ' ':
		return 0
	}
	for e < len(s) && (s[e] == ' ' || s[e] == '\t') {
		e++
	}
	if strings.HasPrefix(s[e:], "│") {
		e += len("│")
		for e < len(s) && s[e] == ' ' {
			e++
		}
	}
	return e
}
