package pipeline

import (
	"strings"
)

// Redacted is the text that replaces a credential value.
const Redacted = "[REDACTED]"

// redactPatterns are the credential name patterns (REFERENCE.md §8, plus
// DSN and AUTHORIZATION, which the reference lacks; Cookie and Set-Cookie
// headers are matched by name in redactAssignment). A pattern
// ending in "_" is a vendor prefix and must equal a name's first segment;
// one containing "_" must match consecutive segments; any other matches a
// segment exactly or as its suffix (MYPASSWORD yes; PASSED, AUTHORS,
// MONKEYS no).
var redactPatterns = []string{
	"SECRET", "TOKEN", "KEY", "PASSWORD", "PASSWD", "PASS", "AUTH", "CREDS", "CREDENTIAL", "CREDENTIALS",
	"API_", "AWS_", "GITHUB_", "ANTHROPIC_", "DATABASE_URL", "REDIS_URL", "MONGO_URL", "CLIENT_SECRET",
	"ACCESS_KEY", "OPENAI_", "GEMINI_", "PRIVATE_KEY", "DSN", "AUTHORIZATION",
}

// Redact replaces credential values in a tool output by [REDACTED] and
// returns the new text and how many values it replaced (REFERENCE.md §8,
// issue 3 §5). It covers, per line:
//
//   - NAME=value and `export NAME=value` (the reference's rule: the name
//     matched against the patterns by segments);
//   - YAML and header style `name: value`, also after curl's "> "/"< ";
//   - JSON and Python string fields `"name": "value"` anywhere in a line,
//     replaced inside the quotes so the document still parses;
//   - `Authorization: <scheme> <credential>` and `Bearer <token>`;
//   - passwords in URLs, scheme://user:password@host;
//   - private key blocks (-----BEGIN … PRIVATE KEY----- … -----END …): the
//     body becomes one [REDACTED] line.
//
// A value is left alone when it is empty or null, a shell expansion ($VAR,
// ${…}, $(…)), already [REDACTED], a YAML boolean or number, a template
// ({{ … }}), `pass` with a count (3, 3/10), unquoted source code (a call,
// an expression, a literal, a dotted path, a variable in `name = value`),
// or, when only the weak KEY pattern matched, a plain lower-case
// identifier, words, or a code expression ("{…}"). A name that ends in a
// descriptive segment (…_NAME, …_FILE, …_MODEL, …_REGION, see
// nonSecretSuffixes) is not a credential. Quotes and indentation are
// kept. Text without credentials is
// returned unchanged without copying. Redact is pure and never panics.
func Redact(text string) (string, int) {
	var b strings.Builder
	changed := false
	count := 0
	inKey := false // inside a private key block
	blockCounted := false
	pos := 0
	for pos < len(text) {
		end := strings.IndexByte(text[pos:], '\n')
		var raw string
		if end < 0 {
			raw = text[pos:]
			end = len(text)
		} else {
			end = pos + end + 1
			raw = text[pos:end]
		}
		body := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
		eol := raw[len(body):]
		out, n := body, 0
		switch {
		case inKey:
			if strings.Contains(body, "-----END ") {
				inKey = false
				break
			}
			// Every body line becomes [REDACTED] on its own line, so the
			// text keeps its line count (a Read's numbering holds).
			changedHere := false
			if strings.TrimSpace(body) != Redacted {
				out = leadingBlanks(body) + Redacted
				changedHere = out != body
			}
			if changedHere {
				if !blockCounted {
					n = 1
					blockCounted = true
				} else {
					n = -1 // changed, counted with its block
				}
			}
		case pemKeyHeader(body) && strings.Contains(text[end:], "-----END "):
			// A header that is the whole line (after a line-number prefix),
			// with an END line somewhere below: a key block. A line that
			// merely mentions the header (code, JSON strings) is not one.
			inKey, blockCounted = true, false
		default:
			out, n = redactLine(body)
		}
		if n != 0 || out != body {
			if !changed {
				b.Grow(len(text))
				b.WriteString(text[:pos])
				changed = true
			}
			if n > 0 {
				count += n
			}
			b.WriteString(out)
			b.WriteString(eol)
		} else if changed {
			b.WriteString(raw)
		}
		pos = end
	}
	if !changed {
		return text, count
	}
	return b.String(), count
}

// leadingBlanks returns the indentation of s.
func leadingBlanks(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[:i]
}

// redactLine redacts one line (without its ending) and counts the values.
func redactLine(s string) (string, int) {
	n := 0
	if out, ok := redactAssignment(s); ok {
		return out, 1
	}
	if strings.Contains(s, "uthorization") {
		var k int
		s, k = redactAuthorization(s)
		n += k
	}
	if strings.Contains(s, "earer ") {
		var k int
		s, k = redactBearer(s)
		n += k
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		var k int
		s, k = redactURLPasswords(s)
		n += k
	}
	{
		var k int
		s, k = redactKnownTokens(s)
		n += k
	}
	if strings.Contains(s, "\":") || strings.Contains(s, "\" :") || strings.Contains(s, "':") {
		var k int
		s, k = redactQuotedFields(s)
		n += k
	}
	return s, n
}

// redactAssignment handles a whole-line `NAME=value` or `name: value`
// (after a Read "N→" or cat -n "N\t" line number, a grep "path:N:" prefix,
// indentation, "export ", "- ", and curl's "> "/"< ").
func redactAssignment(s string) (string, bool) {
	i := skipLinePrefix(s)
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if strings.HasPrefix(s[i:], "> ") || strings.HasPrefix(s[i:], "< ") {
		i += 2
	}
	if strings.HasPrefix(s[i:], "export ") {
		i += len("export ")
	} else if strings.HasPrefix(s[i:], "- ") {
		i += 2
	}
	ks := i
	for i < len(s) && (isNameByte(s[i]) || (i > ks && s[i] == '-')) {
		i++
	}
	if i == ks {
		return s, false
	}
	key := s[ks:i]
	j := i
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) {
		return s, false
	}
	spaced := j > i || (j+1 < len(s) && (s[j+1] == ' ' || s[j+1] == '\t'))
	colon := false
	switch s[j] {
	case '=':
		if strings.IndexByte(key, '-') >= 0 || (j+1 < len(s) && s[j+1] == '=') {
			return s, false // not a name, or "==" comparison
		}
	case ':':
		if j+1 < len(s) && s[j+1] != ' ' && s[j+1] != '\t' {
			return s, false
		}
		colon = true
	default:
		return s, false
	}
	matched, weak := matchSecretName(key)
	cookie := colon && (strings.EqualFold(key, "cookie") || strings.EqualFold(key, "set-cookie"))
	if cookie {
		matched, weak = true, false
	}
	if !matched {
		return s, false
	}
	if colon && (strings.EqualFold(key, "pass") || strings.EqualFold(key, "authorization")) {
		// "PASS: test_x" is a test verdict; Authorization keeps its scheme
		// (redactAuthorization).
		return s, false
	}
	vs := j + 1
	for vs < len(s) && (s[vs] == ' ' || s[vs] == '\t') {
		vs++
	}
	ve := len(s)
	for ve > vs && (s[ve-1] == ' ' || s[ve-1] == '\t') {
		ve--
	}
	v := s[vs:ve]
	if colon && (strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">")) && len(v) <= 3 {
		return s, false // a block scalar header: its body is judged line by line
	}
	q := byte(0)
	inner := v
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		q, inner = v[0], v[1:len(v)-1]
	}
	if q == 0 && !cookie && codeLike(v, spaced && !colon) {
		return s, false
	}
	if !redactableValue(key, inner, weak, colon) {
		return s, false
	}
	if q != 0 {
		return s[:vs] + string(q) + Redacted + string(q) + s[ve:], true
	}
	return s[:vs] + Redacted + s[ve:], true
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
	for d < len(s) && s[d] >= '0' && s[d] <= '9' {
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
			for e < len(s) && s[e] >= '0' && s[e] <= '9' {
				e++
			}
			if e > k+1 && e < len(s) && s[e] == c {
				return e + 1
			}
		}
	}
	return 0
}

// codeLike reports an unquoted value that is source code rather than a
// credential: a call, index or literal collection, an expression with
// blanks, a trailing "," of a multi-line call, a boolean, null or number
// literal, or a dotted attribute path (self.auth, settings.SECRET_KEY);
// in a spaced "name = value" assignment, also a bare identifier (a
// variable). Credentials in code are string literals, which stay
// redactable.
func codeLike(v string, spacedAssign bool) bool {
	if v == "" {
		return false
	}
	if strings.ContainsAny(v, "()[]{}<> \t") || strings.HasSuffix(v, ",") || strings.HasSuffix(v, ";") {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "none", "null", "nil", "undefined":
		return true
	}
	if isCount(v) || isDecimal(v) {
		return true
	}
	if dottedPath(v) {
		return true
	}
	return spacedAssign && isIdentifier(v)
}

// isDecimal reports a number such as "-1.5".
func isDecimal(v string) bool {
	v = strings.TrimPrefix(v, "-")
	dot := false
	for i := 0; i < len(v); i++ {
		if v[i] == '.' && !dot && i > 0 && i < len(v)-1 {
			dot = true
			continue
		}
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

// isIdentifier reports [A-Za-z_][A-Za-z0-9_]*.
func isIdentifier(v string) bool {
	if v == "" || (v[0] >= '0' && v[0] <= '9') {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isNameByte(v[i]) {
			return false
		}
	}
	return true
}

// dottedPath reports identifier.identifier[...] whose first segment is
// lower-case letters (self.auth, os.environ, settings.SECRET_KEY).
func dottedPath(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if !isIdentifier(p) {
			return false
		}
	}
	for i := 0; i < len(parts[0]); i++ {
		if parts[0][i] < 'a' || parts[0][i] > 'z' {
			return false
		}
	}
	return true
}

// isNameByte is [A-Za-z0-9_].
func isNameByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || ((c|0x20) >= 'a' && (c|0x20) <= 'z')
}

// redactPatternSegs holds the segments of the multi-segment patterns.
var redactPatternSegs = func() map[string][]string {
	m := map[string][]string{}
	for _, p := range redactPatterns {
		if !strings.HasSuffix(p, "_") && strings.IndexByte(p, '_') >= 0 {
			m[p] = strings.Split(p, "_")
		}
	}
	return m
}()

// nonSecretSuffixes are last name segments that describe a setting about
// a credential rather than the credential (AUTH_USER_MODEL,
// PASSWORD_FILE, SECRET_KEY_MIN_LENGTH, AWS_REGION, SESSION_COOKIE_NAME):
// such a name is not matched. This narrows the reference's rule, which
// redacted them (REFERENCE.md §8).
var nonSecretSuffixes = map[string]bool{
	"NAME": true, "NAMES": true, "MODEL": true, "LENGTH": true, "LEN": true, "FIELD": true, "FIELDS": true,
	"BACKEND": true, "BACKENDS": true, "CLASS": true, "HEADER": true, "PATH": true, "FILE": true, "DIR": true,
	"TYPE": true, "PREFIX": true, "SUFFIX": true, "EXPIRY": true, "EXPIRES": true, "TTL": true, "TIMEOUT": true,
	"MIN": true, "MAX": true, "COUNT": true, "SIZE": true, "AGE": true, "DOMAIN": true, "ENABLED": true,
	"DISABLED": true, "REQUIRED": true, "VERSION": true, "FORMAT": true, "METHOD": true, "ALGORITHM": true,
	"HASHERS": true, "VALIDATORS": true, "SERIALIZER": true, "MODULE": true, "REGION": true, "PROFILE": true,
	"HOST": true, "PORT": true, "LOCATION": true, "MODE": true, "LEVEL": true, "STYLE": true, "CHARS": true,
	"SALT": true, "HINT": true, "PROMPT": true, "SOCK": true, "SOCKET": true,
}

// matchSecretName matches a name against redactPatterns by segments (split
// on "_", "-" and "."), upper-cased. weak reports that only KEY matched. A
// name whose last segment is in nonSecretSuffixes does not match.
func matchSecretName(name string) (matched, weak bool) {
	if name == "" || len(name) > 128 {
		return false, false
	}
	var buf [16]string
	segs := buf[:0]
	up := strings.ToUpper(name)
	start := 0
	for k := 0; k <= len(up); k++ {
		if k == len(up) || up[k] == '_' || up[k] == '-' || up[k] == '.' {
			if k > start && len(segs) < len(buf) {
				segs = append(segs, up[start:k])
			}
			start = k + 1
		}
	}
	if len(segs) == 0 || (len(segs) > 1 && nonSecretSuffixes[segs[len(segs)-1]]) {
		return false, false
	}
	strong := false
	for _, p := range redactPatterns {
		hit := false
		switch {
		case strings.HasSuffix(p, "_"):
			hit = segs[0] == p[:len(p)-1]
		case strings.IndexByte(p, '_') >= 0:
			ps := redactPatternSegs[p]
			for a := 0; a+len(ps) <= len(segs) && !hit; a++ {
				hit = true
				for k := range ps {
					if segs[a+k] != ps[k] {
						hit = false
						break
					}
				}
			}
		default:
			for _, sg := range segs {
				if strings.HasSuffix(sg, p) {
					hit = true
					break
				}
			}
		}
		if hit {
			matched = true
			if p != "KEY" {
				strong = true
			}
		}
	}
	return matched, matched && !strong
}

// redactableValue applies the "left alone" rules of Redact to a value
// (without its quotes).
func redactableValue(key, v string, weak, colon bool) bool {
	lv := strings.ToLower(v)
	switch {
	case v == "" || lv == "null" || lv == "none" || lv == "nil" || v == "~" || lv == "undefined":
		return false
	case strings.Contains(v, Redacted):
		return false
	case isShellExpansion(v):
		return false
	case strings.HasPrefix(v, "{{") || strings.Trim(v, "*") == "" || strings.Trim(v, "•") == "":
		return false
	case strings.EqualFold(key, "pass") && isCount(v):
		return false
	}
	if colon && (lv == "true" || lv == "false" || lv == "yes" || lv == "no" || lv == "on" || lv == "off" || isCount(v)) {
		return false
	}
	if colon && statusWord[lv] {
		// "token: expired", "password: required": a state, not a value.
		return false
	}
	if weak && (strings.HasPrefix(v, "{") || plainIdentifier(v) || strings.ContainsAny(v, " \t")) {
		// (a key, not a credential: an identifier, code, or words)
		return false
	}
	return true
}

// isShellExpansion reports $VAR, ${…} and $(…) (but not "$3cr3t").
func isShellExpansion(v string) bool {
	if len(v) < 2 || v[0] != '$' {
		return false
	}
	c := v[1]
	return c == '{' || c == '(' || c == '_' || ((c|0x20) >= 'a' && (c|0x20) <= 'z')
}

// isCount reports a number or a ratio such as "3" or "3/10".
func isCount(v string) bool {
	if v == "" {
		return false
	}
	slash := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '/' && !slash && i > 0 && i < len(v)-1 {
			slash = true
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plainIdentifier: starts with a lower-case letter, a digit or "_", only
// [a-z0-9._-], under 40 bytes (REFERENCE.md §8, #486; "_" added for
// Python's private names).
func plainIdentifier(v string) bool {
	if v == "" || len(v) >= 40 {
		return false
	}
	c := v[0]
	if !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// tokenByte reports a byte of a credential token.
func tokenByte(c byte) bool {
	return isNameByte(c) || c == '.' || c == '-' || c == '~' || c == '+' || c == '/' || c == '=' || c == ':' || c == '%'
}
