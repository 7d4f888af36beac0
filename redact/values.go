package redact

import (
	"encoding/base64"
	"strings"
)

// valueCtx says where a value stands, which decides how much it must look
// like a credential to be one.
type valueCtx uint8

const (
	// ctxAssign: a whole-line assignment or field (NAME=v, name: v,
	// "name": "v"): under a strong name any value but a placeholder, a
	// reference or a literal is a credential.
	ctxAssign valueCtx = iota
	// ctxColon: `name: v` (YAML, headers): as ctxAssign, and YAML
	// booleans, counts and status words ("token: expired") are not values.
	ctxColon
	// ctxCode: an unquoted value in source code (`f(password=pwd)`): a
	// bare identifier or expression is a variable.
	ctxCode
	// ctxQuery: a URL query parameter, a connection-string field, a shell
	// environment prefix or a command-line flag: the value is data.
	ctxQuery
)

// credentialValue reports whether v (without its quotes) is a credential
// under a name that matched (weak: only KEY matched).
func credentialValue(v string, weak bool, ctx valueCtx, quoted bool) bool {
	if v == "" || len(v) > 1<<16 {
		return v != "" // a 64 KiB value under a credential name is one
	}
	if placeholder(v) || passwordlessStoreURL(v) {
		return false
	}
	lv := strings.ToLower(v)
	if isCount(v) && (len(v) < 4 || ctx == ctxColon || strings.IndexByte(v, '/') > 0) || duration(v) {
		return false
	}
	switch lv {
	case "true", "false", "yes", "no", "on", "off":
		if ctx == ctxColon || ctx == ctxCode || !quoted {
			return false
		}
	}
	if ctx == ctxColon && statusWord(lv) {
		return false
	}
	if !quoted && envName(v) {
		return false // a reference to another setting: key: LOG_LEVEL
	}
	if !quoted && (ctx == ctxCode || ctx == ctxAssign || ctx == ctxColon) && codeLike(v) {
		return false
	}
	if ctx == ctxCode && !quoted && variableName(v) {
		return false
	}
	if weak {
		if strings.HasPrefix(v, "{") || plainIdentifier(v) || strings.ContainsAny(v, " \t") || filePath(v) ||
			lowerSlashPath(v) || embedsEnvRef(v) {
			return false
		}
		// Under a name that only says "key", the value must look like
		// key material: 16 bytes or more, or 8 with letters and digits,
		// all printable ASCII (hotkey: "⌥⌘C", key='ctrl+shift' stay).
		if !(len(v) >= 8 && hasLetterAndDigit(v) || len(v) >= 16 && !isIdentifier(v)) || !printableASCII(v) ||
			strings.IndexByte(v, '\\') >= 0 {
			return false
		}
	}
	return true
}

// placeholders are values written to stand for a credential, not to be one.
func placeholders(s string) bool {
	switch s {
	case "changeme", "change_me", "change-me", "changeit", "secret", "password",
		"passwd", "pass", "token", "apikey", "api_key", "api-key", "key",
		"example", "dummy", "test", "testing", "sample", "placeholder",
		"todo", "tbd", "fixme", "foo", "bar", "baz", "qux", "none",
		"null", "nil", "undefined", "redacted", "hidden", "masked", "...",
		"…", "-", "~", "value", "string", "str", "mypassword",
		"yourpassword", "your_password", "your-password", "secret_key", "xyz",
		"abc", "pw",
		"pwd", "letmein", "user", "username",
		"<empty>", "empty", "notset", "not-set", "unset", "default",
		"user:pass", "user:password", "username:password", "admin:admin", "userpass":
		return true
	}
	return false
}

// placeholder reports a value that stands for a credential: a known word,
// an all-same-character run (xxxx, ****, ••••), an angle- or
// square-bracketed name (<password>, [token]), a reference or template
// (${TOKEN}, $TOKEN, {{ .token }}, %(pw)s, {0}, a process environment reference), or text
// saying it is an example (your_api_key_here, EXAMPLE, xxxx, changeme).
func placeholder(v string) bool {
	if v == "" {
		return true
	}
	if strings.Contains(v, Marker) {
		return true
	}
	lv := strings.ToLower(v)
	if placeholders(lv) || placeholderWord(lv) {
		return true
	}
	// user:pass, neo4j/password: the secret part is the last one.
	if k := strings.LastIndexAny(v, ":/@"); k > 0 && k+1 < len(v) && len(v) <= 40 && strings.IndexAny(v[:k], ":/@") < 0 &&
		plainIdentifier(v[:k]) && placeholderWord(v[k+1:]) {
		return true
	}
	if strings.HasPrefix(v, "eyJ") && fakeJWT(v) {
		return true
	}
	if len(v) > 6 && strings.EqualFold(v[:6], "basic ") {
		// Basic user:password, decoded: a placeholder pair stays.
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v[6:])); err == nil && placeholder(string(b)) {
			return true
		}
	}
	if formatString(v) {
		return true
	}
	if sameChar(v) {
		return true
	}
	if n := len(v); n >= 2 && (v[0] == '<' && v[n-1] == '>' || v[0] == '[' && v[n-1] == ']' || v[0] == '{' && v[n-1] == '}') &&
		nameish(v[1:n-1]) || n >= 3 && v[0] == '%' && v[n-1] == '%' && envName(v[1:n-1]) {
		return true
	}
	if isShellExpansion(v) || strings.HasPrefix(v, "{{") || strings.Contains(v, "${") || strings.Contains(v, "$(") ||
		strings.Contains(v, "{{") || strings.Contains(v, "<%") || strings.HasPrefix(v, "%(") || v == "%s" || v == "%v" || v == "?" {
		return true
	}
	for _, w := range placeholderWords {
		if strings.Contains(lv, w) {
			return true
		}
	}
	if strings.HasPrefix(lv, "process.env") || strings.HasPrefix(lv, "os.environ") || strings.HasPrefix(lv, "env.") ||
		strings.HasPrefix(lv, "secrets.") || strings.HasPrefix(lv, "vault:") || strings.HasPrefix(lv, "secretref:") ||
		strings.HasPrefix(lv, "keyvault:") || strings.HasPrefix(lv, "arn:aws:secretsmanager") || strings.HasPrefix(lv, "op://") {
		return true
	}
	return false
}

// placeholderWords inside a value mark it as an example or a reference.
// Each is long enough that a random credential holds it with negligible
// probability (under 1 in 10^5 for a 40-character value).
var placeholderWords = []string{
	"example", "changeme", "change_me", "change-me", "placeholder", "your_", "your-", "yourkey", "yourtoken",
	"yoursecret", "_here", "-here", "replace_me", "replace-me", "replaceme", "redacted", "dummy", "xxxx", "****",
	"••", "<your", "insert", "fake", "notreal", "not-a-real", "not_a_real", "sample_", "sample-",
	"0000000000", "1234567890", "abcdefgh", "…", "...",
}

// placeholderWord reports a value that, lower-cased and with non-letters
// and trailing digits dropped, is a word standing for a credential or ends
// in one (pass@word, secret2, somepassword, wrong_password, new-token).
func placeholderWord(lv string) bool {
	if len(lv) > 40 {
		return false
	}
	var b [40]byte
	n := 0
	for i := 0; i < len(lv); i++ {
		c := lv[i]
		if isLower(c) {
			b[n] = c
			n++
		} else if !isDigit(c) && strings.IndexByte("_-@.:%0123456789", c) < 0 && c < 0x80 {
			return false // other symbols: a real password's
		}
	}
	w := string(b[:n])
	if w == "" {
		return false
	}
	if placeholders(w) {
		return true
	}
	for _, end := range []string{"password", "passwd", "secret", "token", "apikey", "pass", "key"} {
		if strings.HasSuffix(w, end) && len(w) <= len(end)+8 && onlyLettersDigitsSeps(lv) {
			return true
		}
	}
	return false
}

// onlyLettersDigitsSeps reports [a-z0-9_.-] (with URL escapes of @).
func onlyLettersDigitsSeps(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isLower(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '%' || c == '@' || c == ':') {
			return false
		}
	}
	return true
}

// fakeJWT reports a JWT whose payload says it is fake or an example.
func fakeJWT(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	p, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return false
	}
	lp := strings.ToLower(string(p))
	return strings.Contains(lp, "fake") || strings.Contains(lp, "example") || strings.Contains(lp, "dummy")
}

// sameChar reports a value of one repeated character (xxxx, ****).
func sameChar(v string) bool {
	if len(v) < 3 {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			return false
		}
	}
	return true
}

// statusWord lists words that, after `name:`, state a condition rather than
// give a credential (logs and validation messages print them).
func statusWord(s string) bool {
	switch s {
	case "required", "missing", "expired", "invalid", "empty", "set",
		"unset", "ok", "present", "absent", "hidden", "redacted",
		"n/a", "na", "unknown", "optional", "disabled", "enabled",
		"valid", "revoked", "denied", "failed", "error", "none.",
		"true", "false", "null", "yes", "no", "configured", "found",
		"not", "refreshed", "rotated", "generated", "created", "deleted",
		// Access levels (a GitHub Actions workflow's "id-token: write").
		"read", "write", "none", "read-all", "write-all":
		return true
	}
	return false
}

// isShellExpansion reports $VAR, ${…} and $(…) (but not "$3cr3t").
func isShellExpansion(v string) bool {
	if len(v) < 2 || v[0] != '$' {
		return false
	}
	c := v[1]
	return c == '{' || c == '(' || c == '_' || isUpper(c) || isLower(c)
}

// envName reports an upper-case setting name used as a value
// (key: LOG_LEVEL, secretName: DB_PASSWORD): [A-Z][A-Z0-9_]* with an
// underscore, or upper-case letters only.
func envName(v string) bool {
	if v == "" || !isUpper(v[0]) || len(v) > 64 {
		return false
	}
	under, digit := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '_':
			under = true
		case isDigit(c):
			digit = true
		case isUpper(c):
		default:
			return false
		}
	}
	return under || !digit
}

// codeLike reports an unquoted value that is source code rather than a
// credential: a call, index or literal collection, an expression with
// blanks, a trailing "," or ";", a null or number literal, or a dotted
// attribute path (self.auth, settings.SECRET_KEY).
func codeLike(v string) bool {
	if v == "" {
		return false
	}
	if strings.ContainsAny(v, "()[]{}<> \t") || strings.HasSuffix(v, ",") || strings.HasSuffix(v, ";") {
		return true
	}
	switch strings.ToLower(v) {
	case "none", "null", "nil", "undefined", "true", "false":
		return true
	}
	if isDecimal(v) && len(v) < 6 {
		return true
	}
	return dottedPath(v)
}

// variableName reports a bare identifier that reads as a variable: every
// word (split at "_" and camel humps) holds a vowel and digits come only
// at the end (pwd, db_password, apiKey, token2). A random credential of
// letters and digits almost never passes (its runs lack vowels or hold
// digits inside).
func variableName(v string) bool {
	if !isIdentifier(v) || len(v) > 48 {
		return false
	}
	var buf [16]string
	segs := nameSegments(v, buf[:])
	if len(segs) == 0 {
		return false
	}
	for i, sg := range segs {
		body := strings.TrimRight(sg, "0123456789")
		if body == "" || (len(body) != len(sg) && i != len(segs)-1) {
			return false
		}
		for k := 0; k < len(body); k++ {
			if isDigit(body[k]) {
				return false
			}
		}
		if !strings.ContainsAny(body, "AEIOU") && !abbreviations(body) {
			return false
		}
	}
	return true
}

// abbreviations are vowel-less words of variable names.
func abbreviations(s string) bool {
	switch s {
	case "PWD", "PW", "DB", "CFG", "CTX", "REQ", "RS", "MSG", "FN",
		"CB", "SSH", "TLS", "JWT", "SRC", "DST", "TMP", "STR",
		"SQL", "HTTP", "HTTPS", "XML", "CSV", "PSK", "MFA", "TTL",
		"KV", "K", "V", "X", "S", "N", "P", "B", "C":
		return true
	}
	return false
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
		if !isDigit(v[i]) {
			return false
		}
	}
	return v != ""
}

// isIdentifier reports [A-Za-z_][A-Za-z0-9_]*.
func isIdentifier(v string) bool {
	if v == "" || isDigit(v[0]) {
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
	if strings.IndexByte(v, '.') < 0 {
		return false
	}
	parts := strings.Split(v, ".")
	for _, p := range parts {
		if !isIdentifier(p) {
			return false
		}
	}
	for i := 0; i < len(parts[0]); i++ {
		if !isLower(parts[0][i]) && parts[0][i] != '_' {
			return false
		}
	}
	return true
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
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// plainIdentifier: starts with a lower-case letter, a digit or "_", only
// [a-z0-9._-], under 40 bytes: a value under
// the weak KEY pattern alone (ssh_key, primary_key, React's key=), which is
// then not a credential ("_" added for Python's private names).
func plainIdentifier(v string) bool {
	if v == "" || len(v) >= 40 {
		return false
	}
	c := v[0]
	if !(isLower(c) || isDigit(c) || c == '_') {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isLower(c) || isDigit(c) || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// filePath reports a value naming a file (~/.ssh/id_rsa, ./key.pem,
// /etc/ssl/private/x.key, C:\keys\a.pfx): a weak KEY's value that is a
// path is not the key.
func filePath(v string) bool {
	if len(v) > 200 || strings.ContainsAny(v, "+=") {
		return false // base64, not a path
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") {
		return true
	}
	if len(v) > 3 && (isUpper(v[0]) || isLower(v[0])) && v[1] == ':' && (v[2] == '\\' || v[2] == '/') {
		return true
	}
	for _, ext := range []string{".pem", ".key", ".crt", ".pfx", ".p12", ".json", ".jks", ".pub", ".asc", ".gpg"} {
		if strings.HasSuffix(strings.ToLower(v), ext) {
			return true
		}
	}
	return false
}

// nameish reports the inside of a bracketed placeholder: letters, digits,
// "_", "-", ".", blanks and braces (<your token>, {{ .Token }}, %API_KEY%).
func nameish(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isAlnum(c) || strings.IndexByte("_-. {}$", c) >= 0) {
			return false
		}
	}
	return true
}

// printableASCII reports bytes 0x21..0x7e only.
func printableASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// formatString reports a printf or Python format string: a %s, %v or %d
// standing alone or after a delimiter (user:%s, Bearer %s) and not
// followed by a letter or digit, %(name)s, {}.
func formatString(v string) bool {
	if strings.Contains(v, "%(") || strings.Contains(v, "{}") {
		return true
	}
	for i := 0; i+1 < len(v); i++ {
		if v[i] == '%' && (v[i+1] == 's' || v[i+1] == 'v' || v[i+1] == 'd') && (i+2 == len(v) || strings.IndexByte(" :/@'\"", v[i+2]) >= 0) &&
			(i == 0 || strings.IndexByte(" :=/@", v[i-1]) >= 0) {
			return true
		}
	}
	return false
}

// storeSchemes are the URL schemes of data stores and brokers whose
// connection URL carries its credential, if any, as the password of the
// user-info part (scheme://user:password@host) or as a query parameter.
func storeSchemes(s string) bool {
	switch s {
	case "postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv",
		"redis", "rediss", "amqp", "amqps", "mssql", "sqlserver",
		"clickhouse", "cockroachdb", "nats", "memcached", "cassandra",
		"sqlite", "sqlite3", "oracle", "db2", "neo4j", "bolt":
		return true
	}
	return false
}

// passwordlessStoreURL reports a data store's connection URL
// (storeSchemes, optionally after "jdbc:") with no password in its user
// info and no credential-named query parameter
// (postgres://billing@db:5432/billing, redis://cache:6379/0): it names a
// place and a user, and holds no secret, whatever setting it is assigned
// to (DATABASE_URL: postgres://billing@db/billing stays as written).
func passwordlessStoreURL(v string) bool {
	lv := strings.ToLower(v)
	lv = strings.TrimPrefix(lv, "jdbc:")
	i := strings.Index(lv, "://")
	if i <= 0 || !storeSchemes(lv[:i]) || strings.ContainsAny(v, " \t\"'`") {
		return false
	}
	rest := lv[i+3:]
	auth := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		auth = rest[:k]
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 && strings.IndexByte(auth[:at], ':') >= 0 {
		return false // user:password@
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		query := rest[q+1:]
		if h := strings.IndexByte(query, '#'); h >= 0 {
			query = query[:h]
		}
		for _, kv := range strings.Split(query, "&") {
			name, _, _ := strings.Cut(kv, "=")
			if m, _ := matchName(name); m {
				return false // ?password=…, ?sslpassword=…, ?token=…
			}
		}
	}
	return true
}

// duration reports a span of time written with units, at most 12 bytes
// (15m, 1h30m, 500ms, 7d, 2.5s): a setting's value, never a credential
// (tokenLifetime: 15m).
func duration(v string) bool {
	if len(v) == 0 || len(v) > 12 || !isDigit(v[0]) {
		return false
	}
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && (isDigit(v[j]) || v[j] == '.') {
			j++
		}
		if j == i {
			return false
		}
		k := j
		for k < len(v) && isLower(v[k]) {
			k++
		}
		switch v[j:k] {
		case "ns", "us", "ms", "s", "m", "h", "d", "w", "y":
		default:
			return false
		}
		i = k
	}
	return true
}

// lowerSlashPath reports a path of lower-case identifiers joined by "/"
// (secret/data/billing/db, a Vault or store path under remoteRef.key):
// key material in base64 has upper-case letters. Only under a weak name.
func lowerSlashPath(v string) bool {
	if strings.IndexByte(v, '/') < 0 || len(v) > 200 {
		return false
	}
	letter := false
	for _, seg := range strings.Split(v, "/") {
		if !plainIdentifier(seg) {
			return false
		}
		for i := 0; i < len(seg); i++ {
			letter = letter || isLower(seg[i])
		}
	}
	return letter
}

// embedsEnvRef reports a value built around a reference to an environment
// variable ($CI_COMMIT_REF_SLUG, three or more upper-case name bytes after
// "$"): a template such as a CI cache key (key: go-mod-$CI_COMMIT_REF_SLUG),
// not key material. Only under a weak name.
func embedsEnvRef(v string) bool {
	for i := strings.IndexByte(v, '$'); i >= 0 && i+1 < len(v); {
		j := i + 1
		for j < len(v) && (isUpper(v[j]) || v[j] == '_' || isDigit(v[j]) && j > i+1) {
			j++
		}
		if j-i-1 >= 3 {
			return true
		}
		k := strings.IndexByte(v[i+1:], '$')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}
