package redact

import "strings"

// namePatterns are the credential name patterns: SECRET through
// PRIVATE_KEY below, plus DSN, AUTHORIZATION, PASSPHRASE, APIKEY and
// PWD (as a segment of a longer name only: PWD alone is the shell's working
// directory). A pattern ending in "_" is a vendor prefix and must equal a
// name's first segment; one containing "_" must match consecutive
// segments; PWD must equal a segment; any other matches a segment exactly
// or as its suffix (MYPASSWORD yes; PASSED, AUTHORS, MONKEYS no). Cookie
// headers and URL signatures (sig=) are matched by their own rules.
var namePatterns = []string{
	"SECRET", "TOKEN", "KEY", "PASSWORD", "PASSWD", "PASS", "AUTH", "CREDS", "CREDENTIAL", "CREDENTIALS",
	"API_", "AWS_", "GITHUB_", "ANTHROPIC_", "DATABASE_URL", "REDIS_URL", "MONGO_URL", "CLIENT_SECRET",
	"ACCESS_KEY", "OPENAI_", "GEMINI_", "PRIVATE_KEY", "DSN", "AUTHORIZATION", "PASSPHRASE", "PWD", "APIKEY",
}

// exactPatterns must equal a whole segment (see namePatterns).
func exactPatterns(s string) bool {
	switch s {
	case "PWD":
		return true
	}
	return false
}

// nonSecretSuffixes are last name segments that describe a setting about a
// credential rather than the credential (AUTH_USER_MODEL, PASSWORD_FILE,
// SECRET_KEY_MIN_LENGTH, AWS_REGION, secretKeyRef, TOKEN_EXPIRES_AT):
// such a name is not a credential's.
func nonSecretSuffixes(s string) bool {
	switch s {
	case "NAME", "NAMES", "MODEL", "LENGTH", "LEN", "FIELD", "FIELDS",
		"BACKEND", "BACKENDS", "CLASS", "HEADER", "PATH", "FILE", "DIR",
		"TYPE", "PREFIX", "SUFFIX", "EXPIRY", "EXPIRES", "TTL", "TIMEOUT",
		"MIN", "MAX", "COUNT", "SIZE", "AGE", "DOMAIN", "ENABLED",
		"DISABLED", "REQUIRED", "VERSION", "FORMAT", "METHOD", "ALGORITHM",
		"HASHERS", "VALIDATORS", "SERIALIZER", "MODULE", "REGION", "PROFILE",
		"HOST", "PORT", "LOCATION", "MODE", "LEVEL", "STYLE", "CHARS",
		"SALT", "HINT", "PROMPT", "SOCK", "SOCKET", "REF", "REFS",
		"ID", "IDS", "AT", "LIMIT", "LIMITS", "USAGE", "URL_FILE",
		"POLICY", "SCOPE", "SCOPES", "ISSUER", "AUDIENCE", "ENDPOINT",
		"ENV", "VAR", "SOURCE", "STATUS", "STATE", "KIND", "LABEL",
		"PARAM", "PARAMS", "ARG", "ARGS", "PLACEHOLDER", "SET", "USER",
		"USERNAME", "LOGIN", "SELECTOR", "DATE", "TIME", "RESET", "ROTATION",
		"CHANGED", "ENCODING", "CACHE", "STORE", "PROVIDER", "PROVIDERS",
		"STRATEGY", "FILES", "KEYS", "TOKENS", "SECRETS", "LIST",
		"REGEX", "PATTERN", "PATTERNS", "FUNC", "FN", "MAP", "BINDING",
		"BINDINGS", "COLUMN", "INDEX", "HANDLER", "CALLBACK", "HOOK", "EVENT",
		"ERROR", "ERRORS", "EXCEPTION", "MESSAGE", "MSG", "CHECK", "TEST",
		"TESTS", "VALIDATOR", "RESULT", "RESPONSE", "REQUEST", "FORM", "VIEW",
		"STDIN", "FROM", "CMD", "COMMAND", "HELPER", "SAMESITE", "SECURE",
		"HTTPONLY", "INPUT", "FALLBACKS", "FALLBACK", "FIELD_NAME", "LOOKUP", "SPEC", "TEMPLATE",
		"LIFETIME", "DURATION", "INTERVAL", "PERIOD":
		return true
	}
	return false
}

// nameSegments splits a name into upper-case segments on "_", "-", ".",
// blanks and camel-case humps (apiKey → API, KEY; APIKey → API, KEY). At
// most len(buf) segments are kept.
func nameSegments(name string, buf []string) []string {
	segs := buf[:0]
	start := 0
	flush := func(k int) {
		if k > start && len(segs) < cap(buf) {
			segs = append(segs, strings.ToUpper(name[start:k]))
		}
		start = k
	}
	for k := 0; k < len(name); k++ {
		c := name[k]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ' || c == '$' || c == ':' || c == '/':
			flush(k)
			start = k + 1
		case isUpper(c) && k > start:
			p := name[k-1]
			if isLower(p) {
				flush(k)
			} else if isUpper(p) && k+1 < len(name) && isLower(name[k+1]) {
				flush(k)
			}
		}
	}
	flush(len(name))
	return segs
}

// seg is one segment of a name: name[s:e].
type seg struct{ s, e int }

// segmentBounds splits a name as nameSegments does, into index pairs
// (no allocation).
func segmentBounds(name string, buf []seg) []seg {
	segs := buf[:0]
	start := 0
	flush := func(k int) {
		if k > start && len(segs) < cap(buf) {
			segs = append(segs, seg{start, k})
		}
		start = k
	}
	for k := 0; k < len(name); k++ {
		c := name[k]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ' || c == '$' || c == ':' || c == '/':
			flush(k)
			start = k + 1
		case isUpper(c) && k > start:
			p := name[k-1]
			if isLower(p) {
				flush(k)
			} else if isUpper(p) && k+1 < len(name) && isLower(name[k+1]) {
				flush(k)
			}
		}
	}
	flush(len(name))
	return segs
}

// hasSuffixFold reports whether s ends with the upper-case suffix, ignoring
// ASCII case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// matchName matches a name against namePatterns by segments. weak reports
// that only KEY matched (ssh_key, primary_key, React key=): the value then
// decides. A name whose last segment is in nonSecretSuffixes does not match.
// It does not allocate.
func matchName(name string) (matched, weak bool) {
	if name == "" || len(name) > 128 || !hasStem(name) {
		return false, false
	}
	var buf [16]seg
	segs := segmentBounds(name, buf[:])
	if len(segs) == 0 {
		return false, false
	}
	at := func(k int) string { return name[segs[k].s:segs[k].e] }
	if len(segs) == 2 && strings.EqualFold(at(0), "SECRET") && strings.EqualFold(at(1), "ID") {
		return true, false // Vault AppRole's secret_id, Consul's SecretID: the credential itself
	}
	if len(segs) > 1 {
		last := at(len(segs) - 1)
		if len(last) <= 24 {
			var up [24]byte
			for i := 0; i < len(last); i++ {
				c := last[i]
				if isLower(c) {
					c -= 0x20
				}
				up[i] = c
			}
			if nonSecretSuffixes(string(up[:len(last)])) {
				return false, false
			}
		}
	}
	if len(segs) == 2 && strings.EqualFold(at(0), "EXISTING") && (strings.EqualFold(at(1), "SECRET") || strings.EqualFold(at(1), "SECRETS")) {
		return false, false // existingSecret, existing_secrets: a Secret object's name
	}
	if len(segs) == 1 && strings.EqualFold(at(0), "PWD") {
		return false, false // the shell's working directory
	}
	strong := false
	for _, p := range namePatterns {
		hit := false
		switch {
		case strings.HasSuffix(p, "_"):
			hit = len(segs) > 1 && strings.EqualFold(at(0), p[:len(p)-1])
		case strings.IndexByte(p, '_') >= 0:
			for a := 0; a < len(segs) && !hit; a++ {
				hit = segmentsFrom(name, segs[a:], p)
			}
		case exactPatterns(p):
			for k := range segs {
				if strings.EqualFold(at(k), p) {
					hit = true
					break
				}
			}
		default:
			for k := range segs {
				if hasSuffixFold(at(k), p) {
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
	for k := 0; matched && !strong && k+1 < len(segs); k++ {
		if strings.EqualFold(at(k), "KEY") && strings.EqualFold(at(k+1), "DATA") {
			strong = true // kubeconfig client-key-data
		}
	}
	if matched && !strong && len(segs) > 1 {
		// A weak KEY after a credential word (ACCOUNT_KEY, MASTER_KEY,
		// SIGNING_KEY, ENCRYPTION_KEY, SHARED_ACCESS_KEY) is strong.
		prev := at(len(segs) - 2)
		for _, w := range keyQualifiers {
			if strings.EqualFold(prev, w) {
				strong = true
				break
			}
		}
	}
	return matched, matched && !strong
}

// segmentsFrom reports whether segs, the bounds of name's segments from
// some position, start with the "_"-separated parts of the multi-segment
// pattern p, ignoring ASCII case (DATABASE_URL: DATABASE, then URL).
func segmentsFrom(name string, segs []seg, p string) bool {
	for k := 0; ; k++ {
		part, rest, more := strings.Cut(p, "_")
		if k >= len(segs) || !strings.EqualFold(name[segs[k].s:segs[k].e], part) {
			return false
		}
		if !more {
			return true
		}
		p = rest
	}
}

// keyQualifiers make a weak KEY strong when they stand before it.
var keyQualifiers = []string{"ACCOUNT", "MASTER", "SIGNING", "ENCRYPTION", "PRIVATE", "SECRET", "ACCESS", "SERVICE",
	"LICENSE", "HMAC", "APP", "CLIENT", "SUBSCRIPTION", "STORAGE", "WEBHOOK", "DEPLOY", "ADMIN", "MASTERKEY"}

// stems are the lower-case stems every credential name holds (the
// keyword prefilter: a line without one cannot give a credential name,
// so the name rules skip it).
var stems = []string{"pass", "secret", "token", "key", "auth", "cred", "api", "aws", "github", "anthropic", "openai",
	"gemini", "dsn", "pwd", "database_url", "redis_url", "mongo_url", "databaseurl", "redisurl", "mongourl"}

// hasStem reports whether s holds a stem, ignoring ASCII case. It looks at
// each byte once: a table of the stems' first two bytes rejects almost
// every position before any comparison.
func hasStem(s string) bool {
	if len(s) < 3 {
		return false
	}
	p := lowerByte[s[0]]
	for i := 1; i < len(s); i++ {
		c := lowerByte[s[i]]
		if stemPairs.has(uint16(p)<<8 | uint16(c)) {
			for _, st := range stemsBy[p] {
				if len(s)-i+1 >= len(st) && foldEq(s[i+1:i-1+len(st)], st[2:]) {
					return true
				}
			}
		}
		p = c
	}
	return false
}

// foldEq reports a == lower, ignoring ASCII case; lower is lower-case.
func foldEq(a, lower string) bool {
	for k := 0; k < len(lower); k++ {
		c := a[k]
		if isUpper(c) {
			c += 0x20
		}
		if c != lower[k] {
			return false
		}
	}
	return true
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNameByte is [A-Za-z0-9_].
func isNameByte(c byte) bool { return byteClass[c]&className != 0 }

// Byte classes, looked up in one table: the token scan tests every byte
// of every line (a lookup instead of up to eight comparisons).
const (
	className  = 1 << iota // [A-Za-z0-9_]
	classToken             // className and . - ~ + / = %
)

// isAlnum is [A-Za-z0-9].
func isAlnum(c byte) bool { return isDigit(c) || isUpper(c) || isLower(c) }
