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
var exactPatterns = map[string]bool{"PWD": true}

// patternSegs holds the segments of the multi-segment patterns.
var patternSegs = func() map[string][]string {
	m := map[string][]string{}
	for _, p := range namePatterns {
		if !strings.HasSuffix(p, "_") && strings.IndexByte(p, '_') >= 0 {
			m[p] = strings.Split(p, "_")
		}
	}
	return m
}()

// nonSecretSuffixes are last name segments that describe a setting about a
// credential rather than the credential (AUTH_USER_MODEL, PASSWORD_FILE,
// SECRET_KEY_MIN_LENGTH, AWS_REGION, secretKeyRef, TOKEN_EXPIRES_AT):
// such a name is not a credential's.
var nonSecretSuffixes = map[string]bool{
	"NAME": true, "NAMES": true, "MODEL": true, "LENGTH": true, "LEN": true, "FIELD": true, "FIELDS": true,
	"BACKEND": true, "BACKENDS": true, "CLASS": true, "HEADER": true, "PATH": true, "FILE": true, "DIR": true,
	"TYPE": true, "PREFIX": true, "SUFFIX": true, "EXPIRY": true, "EXPIRES": true, "TTL": true, "TIMEOUT": true,
	"MIN": true, "MAX": true, "COUNT": true, "SIZE": true, "AGE": true, "DOMAIN": true, "ENABLED": true,
	"DISABLED": true, "REQUIRED": true, "VERSION": true, "FORMAT": true, "METHOD": true, "ALGORITHM": true,
	"HASHERS": true, "VALIDATORS": true, "SERIALIZER": true, "MODULE": true, "REGION": true, "PROFILE": true,
	"HOST": true, "PORT": true, "LOCATION": true, "MODE": true, "LEVEL": true, "STYLE": true, "CHARS": true,
	"SALT": true, "HINT": true, "PROMPT": true, "SOCK": true, "SOCKET": true, "REF": true, "REFS": true,
	"ID": true, "IDS": true, "AT": true, "LIMIT": true, "LIMITS": true, "USAGE": true, "URL_FILE": true,
	"POLICY": true, "SCOPE": true, "SCOPES": true, "ISSUER": true, "AUDIENCE": true, "ENDPOINT": true,
	"ENV": true, "VAR": true, "SOURCE": true, "STATUS": true, "STATE": true, "KIND": true, "LABEL": true,
	"PARAM": true, "PARAMS": true, "ARG": true, "ARGS": true, "PLACEHOLDER": true, "SET": true, "USER": true,
	"USERNAME": true, "LOGIN": true, "SELECTOR": true, "DATE": true, "TIME": true, "RESET": true, "ROTATION": true,
	"CHANGED": true, "ENCODING": true, "CACHE": true, "STORE": true, "PROVIDER": true, "PROVIDERS": true,
	"STRATEGY": true, "FILES": true, "KEYS": true, "TOKENS": true, "SECRETS": true, "LIST": true,
	"REGEX": true, "PATTERN": true, "PATTERNS": true, "FUNC": true, "FN": true, "MAP": true, "BINDING": true,
	"BINDINGS": true, "COLUMN": true, "INDEX": true, "HANDLER": true, "CALLBACK": true, "HOOK": true, "EVENT": true,
	"ERROR": true, "ERRORS": true, "EXCEPTION": true, "MESSAGE": true, "MSG": true, "CHECK": true, "TEST": true,
	"TESTS": true, "VALIDATOR": true, "RESULT": true, "RESPONSE": true, "REQUEST": true, "FORM": true, "VIEW": true,
	"STDIN": true, "FROM": true, "CMD": true, "COMMAND": true, "HELPER": true, "SAMESITE": true, "SECURE": true,
	"HTTPONLY": true, "INPUT": true, "FALLBACKS": true, "FALLBACK": true, "FIELD_NAME": true, "LOOKUP": true, "SPEC": true, "TEMPLATE": true,
	"LIFETIME": true, "DURATION": true, "INTERVAL": true, "PERIOD": true,
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
			if nonSecretSuffixes[string(up[:len(last)])] {
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
			ps := patternSegs[p]
			for a := 0; a+len(ps) <= len(segs) && !hit; a++ {
				hit = true
				for k := range ps {
					if !strings.EqualFold(at(a+k), ps[k]) {
						hit = false
						break
					}
				}
			}
		case exactPatterns[p]:
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

// keyQualifiers make a weak KEY strong when they stand before it.
var keyQualifiers = []string{"ACCOUNT", "MASTER", "SIGNING", "ENCRYPTION", "PRIVATE", "SECRET", "ACCESS", "SERVICE",
	"LICENSE", "HMAC", "APP", "CLIENT", "SUBSCRIPTION", "STORAGE", "WEBHOOK", "DEPLOY", "ADMIN", "MASTERKEY"}

// stems are the lower-case stems every credential name holds (the
// keyword prefilter: a line without one cannot give a credential name,
// so the name rules skip it).
var stems = []string{"pass", "secret", "token", "key", "auth", "cred", "api", "aws", "github", "anthropic", "openai",
	"gemini", "dsn", "pwd", "database_url", "redis_url", "mongo_url", "databaseurl", "redisurl", "mongourl"}

// lowerByte maps ASCII upper-case letters to lower case.
var lowerByte = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if isUpper(byte(i)) {
			t[i] = byte(i) + 0x20
		}
	}
	return t
}()

// stemPairs marks the lower-cased first two bytes of every stem; stemsBy
// lists the stems by their first byte.
var (
	stemPairs pairSet
	stemsBy   [256][]string
)

func init() {
	for _, s := range stems {
		stemPairs.add(s[0], s[1])
		stemsBy[s[0]] = append(stemsBy[s[0]], s)
	}
}

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

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if b == '_' || isDigit(b) || isUpper(b) || isLower(b) {
			t[c] |= className | classToken
		}
		switch b {
		case '.', '-', '~', '+', '/', '=', '%':
			t[c] |= classToken
		}
	}
	return t
}()

// isAlnum is [A-Za-z0-9].
func isAlnum(c byte) bool { return isDigit(c) || isUpper(c) || isLower(c) }
