package redact

import "strings"

// namePatterns are the credential name patterns: the reference's list
// (omni's REFERENCE.md §8) plus DSN, AUTHORIZATION, PASSPHRASE, APIKEY and
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

// matchName matches a name against namePatterns by segments. weak reports
// that only KEY matched (ssh_key, primary_key, React key=): the value then
// decides. A name whose last segment is in nonSecretSuffixes does not match.
func matchName(name string) (matched, weak bool) {
	if name == "" || len(name) > 128 {
		return false, false
	}
	var buf [16]string
	segs := nameSegments(name, buf[:])
	if len(segs) == 0 || (len(segs) > 1 && nonSecretSuffixes[segs[len(segs)-1]]) {
		return false, false
	}
	if len(segs) == 1 && segs[0] == "PWD" {
		return false, false // the shell's working directory
	}
	strong := false
	for _, p := range namePatterns {
		hit := false
		switch {
		case strings.HasSuffix(p, "_"):
			hit = segs[0] == p[:len(p)-1] && len(segs) > 1
		case strings.IndexByte(p, '_') >= 0:
			ps := patternSegs[p]
			for a := 0; a+len(ps) <= len(segs) && !hit; a++ {
				hit = true
				for k := range ps {
					if segs[a+k] != ps[k] {
						hit = false
						break
					}
				}
			}
		case exactPatterns[p]:
			for _, sg := range segs {
				if sg == p {
					hit = true
					break
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
	for k := 0; matched && !strong && k+1 < len(segs); k++ {
		if segs[k] == "KEY" && segs[k+1] == "DATA" {
			strong = true // kubeconfig client-key-data
		}
	}
	if matched && !strong && len(segs) > 1 {
		// A weak KEY after a credential word (ACCOUNT_KEY, MASTER_KEY,
		// SIGNING_KEY, ENCRYPTION_KEY, SHARED_ACCESS_KEY) is strong.
		switch segs[len(segs)-2] {
		case "ACCOUNT", "MASTER", "SIGNING", "ENCRYPTION", "PRIVATE", "SECRET", "ACCESS", "SERVICE", "LICENSE",
			"HMAC", "APP", "CLIENT", "SUBSCRIPTION", "STORAGE", "WEBHOOK", "DEPLOY", "ADMIN", "MASTERKEY":
			strong = true
		}
	}
	return matched, matched && !strong
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNameByte is [A-Za-z0-9_].
func isNameByte(c byte) bool {
	return c == '_' || isDigit(c) || isUpper(c) || isLower(c)
}

// isAlnum is [A-Za-z0-9].
func isAlnum(c byte) bool { return isDigit(c) || isUpper(c) || isLower(c) }
