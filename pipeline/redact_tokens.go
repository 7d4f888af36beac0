package pipeline

import (
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// The redactors of credentials that are not a NAME=value assignment
// (redact.go): Authorization and Bearer headers, passwords in URLs, quoted
// JSON and YAML fields, vendor token shapes and PEM private keys. Each takes
// one line and returns it with the values replaced by Redacted, and how
// many it replaced.

// redactAuthorization replaces the credential after "Authorization:"
// (any case), keeping its scheme word.
func redactAuthorization(s string) (string, int) {
	n := 0
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
		for k < len(s) && ((s[k]|0x20) >= 'a' && (s[k]|0x20) <= 'z' || s[k] == '-') {
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
		for ce < len(s) && tokenByte(s[ce]) {
			ce++
		}
		tok := s[cs:ce]
		if tok == "" || isShellExpansion(tok) {
			continue
		}
		// With a scheme word, it must be an HTTP auth scheme; without one,
		// the value must look like a credential (long, not a plain word):
		// "authorization: failed for user bob" states no credential.
		if cs > j && !authScheme(s[j:k]) || cs == j && (len(tok) < 16 || plainWord(tok)) {
			continue
		}
		s = s[:cs] + Redacted + s[ce:]
		n++
		from = cs + len(Redacted)
	}
	return s, n
}

// redactBearer replaces the token after "Bearer " when it is 8 bytes or
// longer.
func redactBearer(s string) (string, int) {
	n := 0
	from := 0
	for from < len(s) {
		i := strings.Index(s[from:], "earer ")
		if i < 0 {
			break
		}
		i += from
		if i == 0 || (s[i-1] != 'B' && s[i-1] != 'b') {
			from = i + 6
			continue
		}
		cs := i + len("earer ")
		ce := cs
		for ce < len(s) && tokenByte(s[ce]) {
			ce++
		}
		if ce-cs >= 8 && !isShellExpansion(s[cs:ce]) {
			s = s[:cs] + Redacted + s[ce:]
			n++
			from = cs + len(Redacted)
			continue
		}
		from = ce
		if from == i {
			from++
		}
	}
	return s, n
}

// redactURLPasswords replaces the password of scheme://user:password@host.
func redactURLPasswords(s string) (string, int) {
	n := 0
	from := 0
	for from < len(s) {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			break
		}
		us := from + i + 3
		ue := us
		for ue < len(s) && !strings.ContainsRune("/?#@ \t\"'<>`", rune(s[ue])) {
			ue++
		}
		from = us
		if ue >= len(s) || s[ue] != '@' {
			continue
		}
		c := strings.IndexByte(s[us:ue], ':')
		if c < 0 {
			continue
		}
		ps := us + c + 1
		pw := s[ps:ue]
		if pw == "" || pw == Redacted || isShellExpansion(pw) {
			from = ue + 1
			continue
		}
		s = s[:ps] + Redacted + s[ue:]
		n++
		from = ps + len(Redacted) + 1
	}
	return s, n
}

// redactQuotedFields replaces string values of secret-named fields in JSON
// ("name": "value") and Python reprs ('name': 'value'), inside the quotes.
func redactQuotedFields(s string) (string, int) {
	n := 0
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '\'' {
			continue
		}
		ke := quotedEnd(s, i)
		if ke < 0 {
			return s, n
		}
		key := s[i+1 : ke]
		j := ke + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j >= len(s) || s[j] != ':' {
			i = ke
			continue
		}
		j++
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j >= len(s) || (s[j] != '"' && s[j] != '\'') {
			i = ke
			continue
		}
		ve := quotedEnd(s, j)
		if ve < 0 {
			return s, n
		}
		if matched, weak := matchSecretName(key); matched && fieldName(key) {
			v := s[j+1 : ve]
			if redactableValue(key, v, weak, false) {
				s = s[:j+1] + Redacted + s[ve:]
				n++
				ve = j + 1 + len(Redacted)
			}
		}
		i = ve
	}
	return s, n
}

// fieldName reports a plausible field name: no blanks, at most 64 bytes.
func fieldName(k string) bool {
	return k != "" && len(k) <= 64 && !strings.ContainsAny(k, " \t")
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
	for i := 0; i+len(needle) <= len(s); i++ {
		if textline.EqualFoldLower(s[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

// knownTokenPrefixes are vendor credential shapes that are secrets wherever
// they stand, with the shortest body (after the prefix, in token bytes)
// that counts: OpenAI/Anthropic "sk-" keys, GitHub tokens, Slack tokens,
// AWS access key ids, Google API keys.
var knownTokenPrefixes = []struct {
	prefix string
	min    int
}{
	{"sk-", 20}, {"ghp_", 30}, {"gho_", 30}, {"ghu_", 30}, {"ghs_", 30}, {"ghr_", 30},
	{"github_pat_", 30}, {"xoxb-", 20}, {"xoxp-", 20}, {"xoxa-", 20}, {"AKIA", 16}, {"AIza", 30},
}

// redactKnownTokens replaces standalone vendor credentials (a known prefix
// at a word boundary followed by enough token bytes) with [REDACTED].
func redactKnownTokens(s string) (string, int) {
	n := 0
	for _, kp := range knownTokenPrefixes {
		if !strings.Contains(s, kp.prefix) {
			continue
		}
		from := 0
		for from < len(s) {
			i := strings.Index(s[from:], kp.prefix)
			if i < 0 {
				break
			}
			i += from
			if i > 0 && tokenByte(s[i-1]) {
				from = i + len(kp.prefix)
				continue
			}
			e := i + len(kp.prefix)
			for e < len(s) && tokenByte(s[e]) {
				e++
			}
			if e-i-len(kp.prefix) >= kp.min && keyShaped(s[i+len(kp.prefix):e], kp.min) {
				s = s[:i] + Redacted + s[e:]
				n++
				from = i + len(Redacted)
				continue
			}
			from = e
		}
	}
	return s, n
}

// pemKeyHeader reports a line that is a private key's PEM header and
// nothing else (after indentation or a Read/cat -n/grep -n line prefix).
func pemKeyHeader(line string) bool {
	h := strings.TrimSpace(line[skipLinePrefix(line):])
	return strings.HasPrefix(h, "-----BEGIN ") && strings.HasSuffix(h, "PRIVATE KEY-----")
}

// statusWord lists words that, after `name:`, state a condition rather than
// give a credential (logs and validation messages print them).
var statusWord = map[string]bool{
	"required": true, "missing": true, "expired": true, "invalid": true, "empty": true, "set": true,
	"unset": true, "ok": true, "present": true, "absent": true, "hidden": true, "redacted": true,
	"n/a": true, "na": true, "unknown": true, "optional": true, "disabled": true, "enabled": true,
	"valid": true, "revoked": true, "denied": true, "failed": true, "error": true, "none.": true,
}

// authScheme reports an HTTP authentication scheme word.
func authScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "digest", "bot", "apikey", "api-key", "negotiate", "ntlm", "hoba", "mutual",
		"aws4-hmac-sha256", "key", "sso-key", "splunk", "dpop", "gssapi":
		return true
	}
	return false
}

// plainWord reports lowercase letters only (a word, not a token).
func plainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// keyShaped reports whether the body of a vendor token looks like a key and
// not like a kebab-case name ("sk-learn-classification-notes"): letters and
// digits both, at most three separators, and one run without a separator
// of at least min characters.
func keyShaped(body string, min int) bool {
	letters, digits, seps, run, best := 0, 0, 0, 0, 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			run++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
			run++
		case c == '-' || c == '_':
			seps++
			run = 0
		default:
			return false
		}
		best = max(best, run)
	}
	return letters > 0 && digits > 0 && seps <= 3 && best >= min
}
