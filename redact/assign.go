package redact

import (
	"strings"
)

// assignmentSpans finds values given to credential names, in every syntax
// the rules know: a whole-line assignment, inline name=value pairs (query
// strings, connection strings, shell prefixes, flags, attributes), quoted
// fields ("name": "value", 'name' => 'value', ("NAME", "value")), HTTP
// headers, URL userinfo, command-line flags, XML elements, YAML flow
// mappings, Kubernetes name/value pairs, .netrc and .pgpass lines.
func assignmentSpans(line string, f feat, st *lineState, out []span) []span {
	out = columnSpans(line, f, st, out)
	pending := st.secretEnvName
	st.secretEnvName = false
	if pending {
		out = k8sValue(line, out)
	}
	// The keyword prefilter: without a stem of a credential name the
	// name rules cannot match, and most lines have none.
	named := f&fStem != 0
	if (named || f&fCookie != 0) && f&(fEq|fColon) != 0 {
		if sp, ok := wholeLine(line, st); ok {
			out = append(out, sp)
		}
	}
	if f&fEq != 0 && (named || f&fQuery != 0) {
		out = inlineEq(line, out)
	}
	if named && f&fQuote != 0 {
		out = quotedFields(line, out)
	}
	if f&fAuthz != 0 {
		out = authorization(line, out)
	}
	if f&fBearer != 0 {
		out = bearer(line, out)
	}
	if (named || f&fCookie != 0) && f&fColon != 0 {
		out = quotedHeaders(line, out)
		if named && f&fBrace != 0 {
			out = flowMapping(line, out)
		}
	}
	if f&fScheme != 0 && f&fAt != 0 {
		out = urlUserinfo(line, out)
	}
	if named && f&(fDash|fNetrc) != 0 || f&fFlag != 0 {
		out = wordSpans(line, out)
	}
	if named && f&fLt != 0 {
		out = xmlSpans(line, out)
	}
	if f&fColon != 0 && strings.Count(line, ":") >= 4 {
		out = pgpass(line, out)
	}
	if named {
		out = tableSpans(line, f, out)
		out = configSetSpans(line, out)
		if f&fColon != 0 && (f&fBrace != 0 || strings.Contains(line, "map[")) {
			out = structSpans(line, out)
		}
	}
	return out
}

// linePrefixes are words before a name on an assignment line.
var linePrefixes = []string{
	"export ", "set ", "ENV ", "ARG ", "- ", "$env:", "declare -x ", "readonly ", "local ", "const ", "var ",
	"let ", "final ", "static ", "private ", "public ", "setenv ", "> ", "< ", "+ ", "# ", "// ",
}

// wholeLine handles a line that is one assignment: NAME=value, `export
// NAME=value`, `name: value` (YAML, headers), `name = value` (TOML, ini,
// Python), `name := "v"` (Go), `Name: "v",` (a Go struct field), after a
// Read/cat -n/grep -n line number, indentation and a few prefix words.
func wholeLine(s string, st *lineState) (span, bool) {
	i := skipLinePrefix(s)
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for n := 0; n < 3 && i < len(s) && prefixFirst[s[i]]; n++ {
		hit := false
		for _, p := range linePrefixes {
			if strings.HasPrefix(s[i:], p) {
				i += len(p)
				hit = true
				break
			}
		}
		if !hit {
			break
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	ks := i
	for i < len(s) && (isNameByte(s[i]) || i > ks && (s[i] == '-' || s[i] == '.')) {
		i++
	}
	if i == ks {
		return span{}, false
	}
	key := s[ks:i]
	j := i
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) {
		return span{}, false
	}
	spaced := j > i
	colon := false
	switch {
	case s[j] == '=':
		if j+1 < len(s) && (s[j+1] == '=' || s[j+1] == '>' || s[j+1] == '~') {
			return span{}, false // a comparison or an arrow
		}
		if strings.IndexByte(key, '-') >= 0 && !spaced {
			return span{}, false // a flag (--x=) is an inline pair
		}
		spaced = spaced || j+1 < len(s) && (s[j+1] == ' ' || s[j+1] == '\t')
	case s[j] == ':' && j+1 < len(s) && s[j+1] == '=':
		j++
		spaced = true
	case s[j] == ':':
		if j+1 < len(s) && s[j+1] != ' ' && s[j+1] != '\t' {
			return span{}, false
		}
		colon = true
	default:
		return span{}, false
	}
	if colon && (strings.EqualFold(key, "name") || strings.EqualFold(key, "key")) {
		// Kubernetes env: `- name: DB_PASSWORD` then `value: …` below.
		v := strings.Trim(strings.TrimSpace(s[j+1:]), `"'`)
		if m, weak := matchName(v); m && !weak {
			st.secretEnvName = true
		}
	}
	matched, weak := matchName(key)
	cookie := colon && (strings.EqualFold(key, "cookie") || strings.EqualFold(key, "set-cookie"))
	if cookie {
		matched, weak = true, false
	}
	if !matched {
		return span{}, false
	}
	if colon && (strings.EqualFold(key, "pass") || strings.EqualFold(key, "authorization") || strings.EqualFold(key, "proxy-authorization")) {
		// "PASS: test_x" is a test verdict; Authorization keeps its scheme.
		return span{}, false
	}
	vs := j + 1
	for vs < len(s) && (s[vs] == ' ' || s[vs] == '\t') {
		vs++
	}
	ve := len(s)
	for ve > vs && (s[ve-1] == ' ' || s[ve-1] == '\t') {
		ve--
	}
	if ve > vs && s[ve-1] == '\\' {
		// A line continuation: the value ends before it.
		for ve--; ve > vs && (s[ve-1] == ' ' || s[ve-1] == '\t'); ve-- {
		}
	}
	if vs >= ve {
		return span{}, false
	}
	v := s[vs:ve]
	if colon {
		// A type annotation with a default: `password: str = "x"`.
		if k := strings.Index(v, " = "); k > 0 && typeAnnotation(v[:k]) {
			vs += k + 3
			for vs < ve && s[vs] == ' ' {
				vs++
			}
			if vs >= ve {
				return span{}, false
			}
			v, colon, spaced = s[vs:ve], false, true
		}
	}
	if colon && (v[0] == '|' || v[0] == '>') && len(v) <= 3 {
		return span{}, false // a block scalar header: its body is judged line by line
	}
	if colon && (v[0] == '&' || v[0] == '*' || v[0] == '!') && len(v) > 1 && isIdentifier(strings.ReplaceAll(v[1:], "-", "_")) &&
		variableName(strings.ReplaceAll(v[1:], "-", "_")) {
		return span{}, false // a YAML anchor, alias or tag
	}
	if v[0] == '"' || v[0] == '\'' || v[0] == '`' {
		qe := quotedEnd(s, vs)
		if qe < 0 {
			if strings.Contains(v[1:], string(v[0])) {
				return span{}, false
			}
			qe = ve // an unterminated string: the rest of the line
			if !credentialValue(s[vs+1:qe], weak, ctxAssign, true) {
				return span{}, false
			}
			return span{vs + 1, qe, "assignment"}, true
		}
		inner := s[vs+1 : qe]
		if !credentialValue(inner, weak, ctxAssign, true) {
			return span{}, false
		}
		return span{vs + 1, qe, "assignment"}, true
	}
	ctx := ctxAssign
	switch {
	case colon:
		ctx = ctxColon
	case spaced:
		ctx = ctxCode
	}
	if cookie {
		ctx = ctxQuery
	}
	if !credentialValue(v, weak, ctx, false) {
		return span{}, false
	}
	return span{vs, ve, "assignment"}, true
}

// typeAnnotation reports a type in a Python or TypeScript annotation
// (str, Optional[str], str | None, SecretStr).
func typeAnnotation(t string) bool {
	if t == "" || len(t) > 64 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(isNameByte(c) || strings.IndexByte("[]., |", c) >= 0) {
			return false
		}
	}
	return true
}

// k8sValue redacts `value: V` on the line after `- name: <credential name>`.
func k8sValue(line string, out []span) []span {
	t := strings.TrimLeft(line, " \t")
	if len(t) < len("value:") || !strings.EqualFold(t[:len("value:")], "value:") {
		return out
	}
	vs := len(line) - len(t) + len("value:")
	for vs < len(line) && line[vs] == ' ' {
		vs++
	}
	ve := len(line)
	for ve > vs && line[ve-1] == ' ' {
		ve--
	}
	if ve-vs >= 2 && (line[vs] == '"' || line[vs] == '\'') && line[ve-1] == line[vs] {
		vs, ve = vs+1, ve-1
	}
	if vs < ve && credentialValue(line[vs:ve], false, ctxColon, true) {
		out = append(out, span{vs, ve, "assignment"})
	}
	return out
}

// inlineEq finds name=value pairs inside a line: URL query parameters
// (?api_key=…&sig=…), connection strings (…;AccountKey=…;), shell
// environment prefixes (PGPASSWORD=… psql), flags (--password=…), npm's
// //registry/:_authToken=…, attributes (password="…"), keyword arguments.
func inlineEq(line string, out []span) []span {
	for k := 0; k < len(line); k++ {
		if line[k] != '=' {
			continue
		}
		if k+1 < len(line) && (line[k+1] == '=' || line[k+1] == '>' || line[k+1] == '~') {
			k++
			continue
		}
		if k > 0 && strings.IndexByte("=!<>:+-*/%&|^", line[k-1]) >= 0 && line[k-1] != '-' {
			continue
		}
		ns := k
		for ns > 0 && k-ns < 96 && (isNameByte(line[ns-1]) || line[ns-1] == '.' || line[ns-1] == '-') {
			ns--
		}
		dashes := 0
		for ns < k && line[ns] == '-' {
			ns++
			dashes++
		}
		if ns == k || ns > 0 && isNameByte(line[ns-1]) {
			continue
		}
		name := line[ns:k]
		prev := byte(' ')
		if ns-dashes > 0 {
			prev = line[ns-dashes-1]
		}
		matched, weak := matchName(name)
		if !matched && (prev == '?' || prev == '&') && queryCredential(strings.ToLower(name)) {
			matched = true // a URL signature or a signed request's credential
		}
		if !matched {
			continue
		}
		ctx := ctxCode
		switch {
		case prev == '?' || prev == '&' || prev == ';' || dashes > 0 || prev == ':' || prev == '/':
			ctx = ctxQuery
		case (prev == ' ' || prev == '\t' || ns-dashes == 0) && envName(name):
			ctx = ctxQuery // an environment prefix or assignment: NAME=value
		case ns-dashes == 0:
			ctx = ctxAssign
		}
		vs := k + 1
		if vs >= len(line) {
			break
		}
		var ve int
		quoted := false
		if q := line[vs]; q == '"' || q == '\'' || q == '`' {
			qe := quotedEnd(line, vs)
			if qe < 0 {
				continue
			}
			vs, ve, quoted = vs+1, qe, true
		} else {
			ve = vs
			for ve < len(line) && strings.IndexByte(" \t&;,\"'`)]}<>|", line[ve]) < 0 {
				if line[ve] == '#' && ctx == ctxQuery && prev != ';' {
					break
				}
				ve++
			}
		}
		if ve > vs && credentialValue(line[vs:ve], weak, ctx, quoted) {
			out = append(out, span{vs, ve, "inline"})
		}
		k = max(k, ve-1)
	}
	return out
}

// queryCredential are URL query parameters that carry a credential under a
// name the name rule does not know: signatures of signed URLs (Azure SAS
// sig=, AWS and Google X-*-Signature) and their credential fields.
func queryCredential(s string) bool {
	switch s {
	case "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
		"x-goog-signature", "x-goog-credential", "access_token", "refresh_token",
		"id_token", "client_secret", "apikey", "auth", "pwd":
		return true
	}
	return false
}

// quotedFields finds "name": "value" (JSON, JavaScript, Python and Ruby
// maps, with :, =, => or := between) and ("NAME", "value") pairs (setenv
// calls, tuples), replacing the value inside its quotes.
func quotedFields(s string, out []span) []span {
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '\'' {
			continue
		}
		ke := quotedEnd(s, i)
		if ke < 0 {
			return out
		}
		key := s[i+1 : ke]
		j := ke + 1
		if j < len(s) && s[j] == ']' {
			j++
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j >= len(s) {
			return out
		}
		sep := s[j]
		switch {
		case sep == ':' && j+1 < len(s) && s[j+1] == '=':
			j += 2
		case sep == '=' && j+1 < len(s) && s[j+1] == '>':
			j += 2
		case sep == '=' && j+1 < len(s) && s[j+1] == '=':
			i = ke
			continue
		case sep == ':' || sep == '=' || sep == ',':
			j++
		default:
			i = ke
			continue
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j >= len(s) || (s[j] != '"' && s[j] != '\'') {
			i = ke
			continue
		}
		ve := quotedEnd(s, j)
		if ve < 0 {
			return out
		}
		if fieldName(key) {
			if matched, weak := matchName(key); matched && !(sep == ',' && (weak || !envName(key))) {
				v := s[j+1 : ve]
				if credentialValue(unescape(v), weak, ctxAssign, true) && !(sep == ',' && envName(v)) {
					out = append(out, span{j + 1, ve, "quoted-field"})
				}
			}
		}
		if sep == ',' {
			i = ke // the value may itself be the next pair's name
			continue
		}
		i = ve
	}
	return out
}

// unescape removes backslash escapes of quotes for the value tests (the
// span itself covers the escaped text).
func unescape(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	return strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`).Replace(v)
}

// fieldName reports a plausible field name: no blanks, at most 64 bytes.
func fieldName(k string) bool {
	return k != "" && len(k) <= 64 && !strings.ContainsAny(k, " \t/\\")
}

// quotedEnd returns the index of the quote closing the one at s[i]
// (backslash escapes honoured), or -1.
func quotedEnd(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return -1
}

// indexFold is strings.Index ignoring ASCII case, for a lower-case needle.
func indexFold(s, needle string) int {
	if len(needle) == 0 {
		return 0
	}
	c0, c1 := needle[0], needle[0]-0x20
	for i := 0; i+len(needle) <= len(s); i++ {
		if s[i] != c0 && s[i] != c1 {
			continue
		}
		if strings.EqualFold(s[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}
