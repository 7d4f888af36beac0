package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// Header, flow-mapping and the other in-line forms of an assignment
// (assign.go holds the whole-line and name=value forms).

// authScheme reports an HTTP authentication scheme word.
func authScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "digest", "bot", "apikey", "api-key", "negotiate", "ntlm", "hoba", "mutual",
		"aws4-hmac-sha256", "key", "sso-key", "splunk", "dpop", "gssapi", "otoken", "sharedaccesssignature",
		"genieKey", "klaviyo-api-key", "ssws", "zoho-oauthtoken", "oauth":
		return true
	}
	return false
}

// authorization replaces the credential after "Authorization:" (any case,
// also Proxy-Authorization), keeping its scheme word; AWS SigV4's
// Credential=… and Signature=… are left to the inline rule.
func authorization(s string, out []span) []span {
	for from := 0; from < len(s); {
		i := indexFold(s[from:], "authorization:")
		if i < 0 {
			break
		}
		i += from + len("authorization:")
		from = i
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		k := j
		for k < len(s) && (isUpper(s[k]) || isLower(s[k]) || s[k] == '-' || isDigit(s[k]) && k > j) {
			k++
		}
		cs := j
		if k > j && k < len(s) && s[k] == ' ' {
			cs = k + 1
			for cs < len(s) && s[cs] == ' ' {
				cs++
			}
		}
		ce := cs
		for ce < len(s) && (tokenByte(s[ce]) || s[ce] == ':') {
			ce++
		}
		tok := s[cs:ce]
		if tok == "" || placeholder(tok) {
			continue
		}
		// With a scheme word, it must be an HTTP auth scheme; without one,
		// the value must look like a credential (long, not a plain word):
		// "authorization: failed for user bob" states no credential.
		if cs > j && !authScheme(s[j:k]) || cs == j && (len(tok) < 16 || plainWord(tok)) {
			continue
		}
		if strings.EqualFold(s[j:k], "aws4-hmac-sha256") {
			continue
		}
		if strings.EqualFold(s[j:k], "basic") {
			// Basic user:password: a placeholder pair (user:pass) stays.
			if b, err := base64.StdEncoding.DecodeString(tok); err == nil && placeholder(string(b)) {
				continue
			}
		}
		out = append(out, span{cs, ce, "header"})
		from = ce
	}
	return out
}

// bearer replaces the token after "Bearer " when it is 8 bytes or longer.
func bearer(s string, out []span) []span {
	for from := 0; from < len(s); {
		i := indexFold(s[from:], "bearer ")
		if i < 0 {
			break
		}
		i += from
		cs := i + len("bearer ")
		for cs < len(s) && s[cs] == ' ' {
			cs++
		}
		ce := cs
		for ce < len(s) && tokenByte(s[ce]) {
			ce++
		}
		if ce-cs >= 8 && !placeholder(s[cs:ce]) && !envName(s[cs:ce]) && !variableName(s[cs:ce]) {
			out = append(out, span{cs, ce, "bearer"})
		}
		from = max(ce, i+len("bearer "))
	}
	return out
}

// quotedHeaders finds `Name: value` inside a quoted argument
// (curl -H "X-Api-Key: …", -H 'Cookie: …'), the value running to the
// closing quote.
func quotedHeaders(s string, out []span) []span {
	for k := 1; k < len(s); k++ {
		if s[k] != ':' || k+1 >= len(s) || (s[k+1] != ' ' && s[k+1] != '\t') {
			continue
		}
		ns := k
		for ns > 0 && (isNameByte(s[ns-1]) || s[ns-1] == '-') {
			ns--
		}
		if ns == k || ns == 0 || (s[ns-1] != '"' && s[ns-1] != '\'') {
			continue
		}
		name := s[ns:k]
		lname := strings.ToLower(name)
		if lname == "authorization" || lname == "proxy-authorization" {
			continue
		}
		matched, weak := false, false
		switch {
		case lname == "cookie" || lname == "set-cookie":
			matched = true
		case strings.IndexByte(name, '-') > 0:
			// An HTTP header (X-Api-Key, Private-Token), not a word
			// followed by a colon in a quoted message ("PASS: …").
			matched, weak = matchName(name)
		}
		if !matched {
			continue
		}
		q := s[ns-1]
		vs := k + 2
		for vs < len(s) && s[vs] == ' ' {
			vs++
		}
		ve := vs
		for ve < len(s) && s[ve] != q {
			ve++
		}
		if ve > vs && credentialValue(s[vs:ve], weak, ctxQuery, false) {
			out = append(out, span{vs, ve, "header"})
		}
		k = ve
	}
	return out
}

// flowMapping finds `name: value` inside a YAML flow mapping
// ({ user: app, password: s3cret }), the value running to "," or "}".
func flowMapping(s string, out []span) []span {
	for k := 1; k < len(s); k++ {
		if s[k] != ':' || k+1 >= len(s) || s[k+1] != ' ' {
			continue
		}
		ns := k
		for ns > 0 && (isNameByte(s[ns-1]) || s[ns-1] == '-') {
			ns--
		}
		p := ns - 1
		for p >= 0 && s[p] == ' ' {
			p--
		}
		if ns == k || p < 0 || (s[p] != '{' && s[p] != ',') {
			continue
		}
		matched, weak := matchName(s[ns:k])
		if !matched {
			continue
		}
		vs := k + 2
		for vs < len(s) && s[vs] == ' ' {
			vs++
		}
		ve := vs
		for ve < len(s) && s[ve] != ',' && s[ve] != '}' {
			ve++
		}
		e := ve
		for e > vs && s[e-1] == ' ' {
			e--
		}
		quoted := false
		if e-vs >= 2 && (s[vs] == '"' || s[vs] == '\'') && s[e-1] == s[vs] {
			vs, e, quoted = vs+1, e-1, true
		}
		if e > vs && credentialValue(s[vs:e], weak, ctxColon, quoted) {
			out = append(out, span{vs, e, "assignment"})
		}
		k = ve
	}
	return out
}

// urlUserinfo replaces the password of scheme://user:password@host and a
// token standing alone as userinfo (https://TOKEN@github.com).
func urlUserinfo(s string, out []span) []span {
	from := 0
	for from < len(s) {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			break
		}
		us := from + i + 3
		// The authority runs to the path, query or fragment; userinfo ends
		// at its last "@" (a password may hold "@": p@ss).
		ae := us
		for ae < len(s) && strings.IndexByte("/?# \t\"'<>`\\", s[ae]) < 0 {
			ae++
		}
		from = us
		ue := strings.LastIndexByte(s[us:ae], '@')
		if ue <= 0 {
			continue
		}
		ue += us
		c := strings.IndexByte(s[us:ue], ':')
		if c < 0 {
			tok := s[us:ue]
			if len(tok) >= 20 && hasLetterAndDigit(tok) && !placeholder(tok) && !strings.ContainsAny(tok, ".%") {
				out = append(out, span{us, ue, "url-userinfo"})
			}
			from = ue + 1
			continue
		}
		ps := us + c + 1
		pw := s[ps:ue]
		if dpw, err := url.PathUnescape(pw); err == nil {
			pw = dpw
		}
		if pw != "" && !placeholder(pw) && !(pw == s[us:us+c] && len(pw) < 8) {
			out = append(out, span{ps, ue, "url-userinfo"})
		}
		from = ue + 1
	}
	return out
}

// word is one blank-separated word of a line, quotes stripped.
type word struct {
	s, e   int // the word's bytes, without surrounding quotes
	quoted bool
}

// splitWords splits a line on blanks, keeping a quoted word whole.
func splitWords(line string, buf []word) []word {
	ws := buf[:0]
	i := 0
	for i < len(line) && len(ws) < 256 {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			break
		}
		if q := line[i]; q == '"' || q == '\'' {
			if e := quotedEnd(line, i); e > 0 && (e+1 == len(line) || line[e+1] == ' ' || line[e+1] == '\t') {
				ws = append(ws, word{i + 1, e, true})
				i = e + 1
				continue
			}
		}
		s := i
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		ws = append(ws, word{s, i, false})
	}
	return ws
}

// mysqlClients take their password attached to -p (mysql -pS3cret).
func mysqlClients(s string) bool {
	switch s {
	case "mysql", "mysqldump", "mysqladmin", "mariadb", "mysqlimport", "mysqlshow",
		"mysqlcheck", "mariadb-dump", "mariadb-admin", "mysqlsh", "mysqlpump":
		return true
	}
	return false
}

// wordSpans handles command-line flags and word-based files: `--password
// V`, `--token V`, `-storepass V`; mysql -pV; `docker login -p V`,
// `sshpass -p V`, `redis-cli -a V`, `mongosh -p V`; curl -u user:pass;
// openssl -passin pass:V; .netrc (machine h login u password p).
func wordSpans(line string, out []span) []span {
	var buf [32]word
	ws := splitWords(line, buf[:])
	if len(ws) == 0 {
		return out
	}
	first := line[ws[0].s:ws[0].e]
	netrc := first == "machine" || first == "default" || ((first == "password" || first == "passwd") && len(ws) == 2) ||
		(first == "login" && len(ws) >= 4)
	cmd := ""
	for i, w := range ws {
		t := line[w.s:w.e]
		if !w.quoted && !strings.HasPrefix(t, "-") {
			b := t
			if k := strings.LastIndexByte(b, '/'); k >= 0 {
				b = b[k+1:]
			}
			switch {
			case mysqlClients(b), b == "docker", b == "podman", b == "nerdctl", b == "helm", b == "sshpass",
				b == "redis-cli", b == "mongo", b == "mongosh", b == "curl", b == "wget", b == "openssl", b == "keytool",
				b == "oras", b == "skopeo", b == "buildah", b == "crane":
				cmd = b
			}
		}
		next := func() (word, string, bool) {
			if i+1 >= len(ws) {
				return word{}, "", false
			}
			n := ws[i+1]
			v := line[n.s:n.e]
			if !n.quoted && strings.HasPrefix(v, "-") {
				return word{}, "", false
			}
			return n, v, true
		}
		switch {
		case netrc && (t == "password" || t == "passwd"):
			if n, v, ok := next(); ok && credentialValue(v, false, ctxColon, n.quoted) {
				out = append(out, span{n.s, n.e, "netrc"})
			}
		case !w.quoted && strings.HasPrefix(t, "-") && len(t) > 2 && strings.IndexByte(t, '=') < 0:
			name := strings.TrimLeft(t, "-")
			if strings.HasPrefix(name, "no-") {
				continue
			}
			if (name == "passin" || name == "passout" || name == "pass" || name == "password") && cmd == "openssl" {
				if n, v, ok := next(); ok {
					if k := strings.IndexByte(v, ':'); k > 0 && (v[:k] == "pass") && !placeholder(v[k+1:]) {
						out = append(out, span{n.s + k + 1, n.e, "flag"})
					}
				}
				continue
			}
			if name == "user" && (cmd == "curl" || cmd == "wget") {
				out = userPass(line, ws, i, out)
				continue
			}
			if mysqlClients(cmd) && strings.HasPrefix(t, "-p") && !strings.HasPrefix(t, "--") {
				v := t[2:]
				if !placeholder(v) && !isShellExpansion(v) {
					out = append(out, span{w.s + 2, w.e, "flag"})
				}
				continue
			}
			matched, weak := matchName(name)
			if !matched {
				continue
			}
			if n, v, ok := next(); ok && credentialValue(v, weak, ctxQuery, n.quoted) && !filePath(v) && (n.quoted || !plainWord(v)) {
				out = append(out, span{n.s, n.e, "flag"})
			}
		case !w.quoted && len(t) > 2 && strings.HasPrefix(t, "-p") && mysqlClients(cmd):
			v := t[2:]
			if !placeholder(v) && !isShellExpansion(v) {
				out = append(out, span{w.s + 2, w.e, "flag"})
			}
		case !w.quoted && (t == "-p" && (cmd == "docker" || cmd == "podman" || cmd == "nerdctl" || cmd == "helm" ||
			cmd == "sshpass" || cmd == "mongo" || cmd == "mongosh" || cmd == "oras" || cmd == "buildah") ||
			t == "-a" && cmd == "redis-cli"):
			if n, v, ok := next(); ok && !placeholder(v) && !isShellExpansion(v) {
				out = append(out, span{n.s, n.e, "flag"})
			}
		case !w.quoted && t == "-u" && (cmd == "curl" || cmd == "wget"):
			out = userPass(line, ws, i, out)
		}
	}
	return out
}

// userPass redacts the password of the user:password word after ws[i].
func userPass(line string, ws []word, i int, out []span) []span {
	if i+1 >= len(ws) {
		return out
	}
	n := ws[i+1]
	v := line[n.s:n.e]
	k := strings.IndexByte(v, ':')
	if k < 0 || k+1 >= len(v) {
		return out
	}
	if pw := v[k+1:]; !placeholder(pw) && !isShellExpansion(pw) {
		out = append(out, span{n.s + k + 1, n.e, "flag"})
	}
	return out
}

// xmlSpans finds <password>v</password> elements, .NET appSettings
// (<add key="DbPassword" value="v"/>) and Java properties XML
// (<entry key="api.token">v</entry>).
func xmlSpans(s string, out []span) []span {
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		ns := i + 1
		ne := ns
		for ne < len(s) && (isNameByte(s[ne]) || s[ne] == '-' || s[ne] == '.' || s[ne] == ':') {
			ne++
		}
		if ne == ns || ne >= len(s) {
			continue
		}
		if s[ne] == '>' {
			name := s[ns:ne]
			if c := strings.LastIndexByte(name, ':'); c >= 0 {
				name = name[c+1:]
			}
			if m, weak := matchName(name); m {
				vs := ne + 1
				ve := strings.IndexByte(s[vs:], '<')
				if ve < 0 {
					ve = len(s)
				} else {
					ve += vs
				}
				if ve > vs && credentialValue(s[vs:ve], weak, ctxAssign, true) {
					out = append(out, span{vs, ve, "xml"})
				}
			}
			i = ne
			continue
		}
		// Attributes: key="Name" / name="Name" followed by value="v" or >v<.
		te := strings.IndexByte(s[ne:], '>')
		if te < 0 {
			te = len(s)
		} else {
			te += ne
		}
		tag := s[ne:te]
		for _, an := range []string{` key="`, ` name="`, ` key='`, ` name='`} {
			a := strings.Index(tag, an)
			if a < 0 {
				continue
			}
			as := ne + a + len(an)
			ae := quotedEnd(s, as-1)
			if ae < 0 {
				break
			}
			m, weak := matchName(s[as:ae])
			if !m {
				break
			}
			rest := s[ae+1 : te]
			if v := strings.Index(rest, `value="`); v >= 0 && strings.TrimSpace(rest[:v]) == "" {
				vs := ae + 1 + v + len(`value="`)
				if ve := quotedEnd(s, vs-1); ve > 0 && credentialValue(s[vs:ve], weak, ctxAssign, true) {
					out = append(out, span{vs, ve, "xml"})
				}
			} else if strings.TrimSpace(rest) == "" && te < len(s) {
				vs := te + 1
				ve := strings.IndexByte(s[vs:], '<')
				if ve > 0 && credentialValue(s[vs:vs+ve], weak, ctxAssign, true) {
					out = append(out, span{vs, vs + ve, "xml"})
				}
			}
			break
		}
		i = te
	}
	return out
}

// pgpass redacts the password of a .pgpass line,
// hostname:port:database:username:password (port digits or *).
func pgpass(line string, out []span) []span {
	n := len(out)
	if out = pgpassAt(line, 0, out); len(out) > n {
		return out
	}
	if p := skipLinePrefix(line); p > 0 {
		out = pgpassAt(line, p, out)
	}
	return out
}

// pgpassAt is pgpass for the line from byte p (after a line-number prefix).
func pgpassAt(line string, p int, out []span) []span {
	t := strings.TrimSpace(line[p:])
	if strings.ContainsAny(t, " \t\"'") || len(t) > 512 {
		return out
	}
	off := p + strings.Index(line[p:], t)
	var f [5]string
	rest := t
	for k := 0; k < 4; k++ {
		c := strings.IndexByte(rest, ':')
		if c <= 0 {
			return out
		}
		f[k], rest = rest[:c], rest[c+1:]
	}
	f[4] = rest
	if f[4] == "" || strings.Count(strings.ReplaceAll(f[4], `\:`, ""), ":") > 0 {
		return out
	}
	if f[1] != "*" && !isCount(f[1]) || strings.Contains(f[1], "/") {
		return out
	}
	host := f[0]
	if host != "*" && !strings.ContainsAny(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return out
	}
	if placeholder(f[4]) || strings.HasSuffix(host, ".go") || strings.HasSuffix(host, ".py") || strings.HasSuffix(host, ".rs") ||
		strings.HasSuffix(host, ".ts") || strings.HasSuffix(host, ".js") {
		return out
	}
	ps := off + len(t) - len(f[4])
	return append(out, span{ps, off + len(t), "pgpass"})
}

// plainWord reports lower-case letters only (a word, not a token).
func plainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLower(s[i]) {
			return false
		}
	}
	return true
}
