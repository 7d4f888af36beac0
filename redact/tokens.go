package redact

import "strings"

// charset names the bytes a vendor token's body may hold.
type charset uint8

const (
	csAlnum     charset = iota // [A-Za-z0-9]
	csAlnumDash                // [A-Za-z0-9_-]
	csHex                      // [0-9a-f]
	csUpperNum                 // [A-Z0-9]
	csB64URLDot                // [A-Za-z0-9_.-]
	csB64                      // [A-Za-z0-9+/=_-]
)

func (c charset) has(b byte) bool {
	switch c {
	case csAlnum:
		return isAlnum(b)
	case csAlnumDash:
		return isAlnum(b) || b == '_' || b == '-'
	case csHex:
		return isDigit(b) || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
	case csUpperNum:
		return isUpper(b) || isDigit(b)
	case csB64URLDot:
		return isAlnum(b) || b == '_' || b == '-' || b == '.'
	case csB64:
		return isAlnum(b) || b == '+' || b == '/' || b == '=' || b == '_' || b == '-'
	}
	return false
}

// vendor is one credential shape recognised by its prefix: the body after
// the prefix holds min to max bytes of cs (max 0: no bound) and ends at a
// byte outside cs. The shapes are the vendors' published token formats
// (prefix, alphabet and length), as their documentation states them;
// "sk-" alone (OpenAI's legacy keys and several others) additionally needs
// a key-shaped body (letters and digits, at most three separators).
type vendor struct {
	prefix, name string
	min, max     int
	cs           charset
}

var vendors = []vendor{
	{"sk_live_", "stripe", 16, 0, csAlnum}, {"sk_test_", "stripe", 16, 0, csAlnum},
	{"rk_live_", "stripe", 16, 0, csAlnum}, {"rk_test_", "stripe", 16, 0, csAlnum},
	{"whsec_", "stripe", 24, 0, csAlnum},
	{"sk-proj-", "openai", 20, 0, csAlnumDash}, {"sk-svcacct-", "openai", 20, 0, csAlnumDash},
	{"sk-admin-", "openai", 20, 0, csAlnumDash}, {"sk-None-", "openai", 20, 0, csAlnumDash},
	{"sk-ant-", "anthropic", 20, 0, csAlnumDash}, {"sk-or-", "openrouter", 20, 0, csAlnumDash},
	{"sk-", "sk", 20, 0, csAlnumDash},
	{"AIza", "google", 35, 35, csAlnumDash}, {"GOCSPX-", "google", 20, 0, csAlnumDash},
	{"ya29.", "google", 20, 0, csB64URLDot},
	{"AKIA", "aws", 16, 16, csUpperNum}, {"ASIA", "aws", 16, 16, csUpperNum}, {"ABIA", "aws", 16, 16, csUpperNum},
	{"ACCA", "aws", 16, 16, csUpperNum}, {"AGPA", "aws", 16, 16, csUpperNum}, {"AIDA", "aws", 16, 16, csUpperNum},
	{"AROA", "aws", 16, 16, csUpperNum}, {"AIPA", "aws", 16, 16, csUpperNum}, {"ANPA", "aws", 16, 16, csUpperNum},
	{"ANVA", "aws", 16, 16, csUpperNum}, {"APKA", "aws", 16, 16, csUpperNum},
	{"ghp_", "github", 30, 0, csAlnum}, {"gho_", "github", 30, 0, csAlnum}, {"ghu_", "github", 30, 0, csAlnum},
	{"ghs_", "github", 30, 0, csAlnum}, {"ghr_", "github", 30, 0, csAlnum}, {"github_pat_", "github", 30, 0, csAlnumDash},
	{"glpat-", "gitlab", 20, 0, csB64URLDot}, {"gldt-", "gitlab", 20, 0, csAlnumDash}, {"glptt-", "gitlab", 20, 0, csAlnumDash},
	{"glrt-", "gitlab", 20, 0, csAlnumDash}, {"glcbt-", "gitlab", 20, 0, csAlnumDash}, {"gloas-", "gitlab", 20, 0, csAlnumDash},
	{"glsoat-", "gitlab", 20, 0, csAlnumDash}, {"glft-", "gitlab", 20, 0, csAlnumDash}, {"glimt-", "gitlab", 20, 0, csAlnumDash},
	{"xoxb-", "slack", 20, 0, csAlnumDash}, {"xoxp-", "slack", 20, 0, csAlnumDash}, {"xoxa-", "slack", 20, 0, csAlnumDash},
	{"xoxr-", "slack", 20, 0, csAlnumDash}, {"xoxs-", "slack", 20, 0, csAlnumDash}, {"xoxe-", "slack", 20, 0, csAlnumDash},
	{"xoxe.xoxp-", "slack", 20, 0, csAlnumDash}, {"xapp-", "slack", 20, 0, csAlnumDash},
	{"dop_v1_", "digitalocean", 64, 64, csHex}, {"doo_v1_", "digitalocean", 64, 64, csHex}, {"dor_v1_", "digitalocean", 64, 64, csHex},
	{"shpat_", "shopify", 32, 32, csHex}, {"shpca_", "shopify", 32, 32, csHex}, {"shppa_", "shopify", 32, 32, csHex},
	{"shpss_", "shopify", 32, 32, csHex},
	{"SK", "twilio", 32, 32, csHex},
	{"key-", "mailgun", 32, 32, csHex},
	{"SG.", "sendgrid", 60, 0, csB64URLDot},
	{"npm_", "npm", 36, 0, csAlnum},
	{"pypi-AgEIcHlwaS5vcmc", "pypi", 40, 0, csAlnumDash},
	{"hf_", "huggingface", 30, 0, csAlnum},
	{"ATATT3", "atlassian", 40, 0, csB64},
	{"dapi", "databricks", 32, 32, csHex},
	{"hvs.", "vault", 24, 0, csAlnumDash}, {"hvb.", "vault", 24, 0, csAlnumDash},
	{"dp.pt.", "doppler", 40, 0, csAlnum}, {"dp.st.", "doppler", 40, 0, csB64URLDot}, {"dp.sa.", "doppler", 40, 0, csAlnum},
	{"dp.ct.", "doppler", 40, 0, csAlnum},
	{"pul-", "pulumi", 40, 40, csHex},
	{"lin_api_", "linear", 40, 0, csAlnum},
	{"ntn_", "notion", 40, 0, csAlnum}, {"secret_", "notion", 43, 43, csAlnum},
	{"PMAK-", "postman", 50, 0, csAlnumDash},
	{"sntrys_", "sentry", 40, 0, csB64}, {"sntryu_", "sentry", 40, 0, csHex},
	{"glc_", "grafana", 32, 0, csB64}, {"glsa_", "grafana", 32, 0, csAlnumDash},
	{"NRAK-", "newrelic", 27, 0, csUpperNum}, {"NRJS-", "newrelic", 19, 0, csHex}, {"NRII-", "newrelic", 32, 0, csAlnumDash},
	{"fo1_", "fly", 40, 0, csAlnumDash},
	{"AGE-SECRET-KEY-1", "age", 50, 0, csUpperNum},
	{"tskey-", "tailscale", 30, 0, csAlnumDash},
	{"dckr_pat_", "docker", 27, 0, csAlnumDash}, {"dckr_oat_", "docker", 27, 0, csAlnumDash},
	{"ops_", "1password", 40, 0, csB64},
	{"sbp_", "supabase", 40, 40, csHex}, {"sb_secret_", "supabase", 20, 0, csAlnumDash},
	{"r8_", "replicate", 37, 0, csAlnum},
	{"gsk_", "groq", 40, 0, csAlnum}, {"xai-", "xai", 60, 0, csAlnum}, {"pplx-", "perplexity", 40, 0, csAlnum},
	{"rnd_", "render", 30, 0, csAlnum}, {"nfp_", "netlify", 36, 0, csAlnum}, {"HRKU-", "heroku", 30, 0, csAlnumDash},
	{"figd_", "figma", 40, 0, csAlnumDash},
	{"sq0atp-", "square", 22, 0, csAlnumDash}, {"sq0csp-", "square", 40, 0, csAlnumDash}, {"EAAA", "square", 60, 0, csAlnumDash},
	{"sk.eyJ", "mapbox", 60, 0, csB64URLDot},
	{"shippo_live_", "shippo", 40, 40, csHex}, {"shippo_test_", "shippo", 40, 40, csHex},
	{"FLWSECK-", "flutterwave", 32, 0, csAlnumDash}, {"FLWSECK_TEST-", "flutterwave", 32, 0, csAlnumDash},
	{"tfp_", "typeform", 40, 0, csAlnumDash}, {"aio_", "adafruit", 28, 28, csAlnum},
	{"LTAI", "alibaba", 20, 20, csAlnum},
	{"fio-u-", "frameio", 60, 0, csAlnumDash}, {"pnu_", "prefect", 36, 36, csAlnum}, {"rdme_", "readme", 70, 0, csAlnum},
	{"tk-us-", "scalingo", 48, 0, csAlnumDash}, {"bkua_", "buildkite", 40, 40, csHex}, {"CCIPAT_", "circleci", 40, 0, csAlnumDash},
	{"CFPAT-", "contentful", 43, 0, csAlnumDash}, {"duffel_live_", "duffel", 43, 0, csAlnumDash},
	{"duffel_test_", "duffel", 43, 0, csAlnumDash}, {"EZAK", "easypost", 54, 0, csAlnum}, {"EZTK", "easypost", 54, 0, csAlnum},
	{"CLOJARS_", "clojars", 60, 0, csHex}, {"rubygems_", "rubygems", 48, 48, csHex},
	{"pscale_tkn_", "planetscale", 32, 0, csAlnumDash}, {"pscale_pw_", "planetscale", 32, 0, csAlnumDash},
	{"pscale_oauth_", "planetscale", 32, 0, csAlnumDash},
	{"sl.", "dropbox", 130, 0, csAlnumDash}, {"dt0c01.", "dynatrace", 90, 0, csB64URLDot},
	{"lsv2_pt_", "langsmith", 30, 0, csAlnumDash}, {"lsv2_sk_", "langsmith", 30, 0, csAlnumDash},
	{"nvapi-", "nvidia", 40, 0, csAlnumDash}, {"csk-", "cerebras", 40, 0, csAlnum},
	{"ak_", "artifactory", 60, 0, csAlnum}, {"AKCp", "artifactory", 65, 0, csAlnum},
	{"oy2", "nuget", 43, 43, csAlnum}, {"PMAT-", "postman", 26, 0, csAlnum},
}

// minTokenLen is the shortest token tokenSpans recognises: an AWS key id
// (4 + 16 bytes) and every vendor shape are longer, the shortest being a
// 16-byte Stripe body after its prefix.
const minTokenLen = 16

// tokenByte reports a byte of a credential token (its word).
func tokenByte(c byte) bool { return byteClass[c]&classToken != 0 }

// tokenSpans finds vendor tokens, JWTs, webhook URLs and the few shapes
// recognised by structure (Telegram bot tokens, Azure AD client secrets,
// Mailchimp and Mailgun keys) anywhere in a line. A token starts at a
// word boundary (the byte before it is not [A-Za-z0-9_]); each byte is
// looked at a bounded number of times.
func tokenSpans(line string, f feat, out []span) []span {
	if f&fHook != 0 {
		out = webhookSpans(line, out)
	}
	azure := f&fAzure != 0
	runEnd := 0 // the end of the current run of token bytes
	for i := 0; i < len(line); i++ {
		c := line[i]
		if i >= runEnd {
			// Every shape below is 16 bytes or longer and made of token
			// bytes: a shorter run (most words) is skipped whole.
			e := i
			for e < len(line) && (tokenByte(line[e]) || line[e] == ':') {
				e++
			}
			if e-i < minTokenLen {
				i = e
				runEnd = e
				continue
			}
			runEnd = e
		}
		if i > 0 && isNameByte(line[i-1]) {
			continue
		}
		if c == 'e' && f&fEyJ != 0 && strings.HasPrefix(line[i:], "eyJ") {
			if e := jwtEnd(line, i); e > 0 {
				if !fakeJWT(line[i:e]) {
					out = append(out, span{i, e, "jwt"})
				}
				i = e - 1
				continue
			}
		}
		if isDigit(c) || c >= 'a' && c <= 'f' {
			if e, kind := structuredToken(line, i); e > 0 {
				out = append(out, span{i, e, kind})
				i = e - 1
				continue
			}
		}
		if azure && (isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '~') {
			if e := azureADSecret(line, i); e > 0 {
				out = append(out, span{i, e, "vendor:azure-ad"})
				i = e - 1
				continue
			}
		}
		for _, v := range vendorsByByte[c] {
			if i+1 >= len(line) || line[i+1] != v.prefix[1] || !strings.HasPrefix(line[i:], v.prefix) {
				continue
			}
			bs := i + len(v.prefix)
			e := bs
			for e < len(line) && v.cs.has(line[e]) {
				e++
			}
			n := e - bs
			if n < v.min || v.max > 0 && n > v.max {
				if v.max > 0 && n > v.max {
					break // a longer word: not this token, and no shorter prefix fits
				}
				continue
			}
			if e < len(line) && isNameByte(line[e]) {
				continue
			}
			body := line[bs:e]
			if v.name == "sk" && !keyShaped(body, v.min) {
				continue
			}
			if v.name == "twilio" || v.name == "mailgun" || v.name == "databricks" {
				if !hasLetterAndDigit(body) {
					continue
				}
			}
			if fakeBody(body) {
				i = e - 1
				break
			}
			out = append(out, span{i, e, "vendor:" + v.name})
			i = e - 1
			break
		}
	}
	return out
}

// jwtEnd returns the end of a JSON Web Token starting at i (three or five
// base64url parts joined by dots, the first two starting with "eyJ", the
// encoding of `{"`), or 0.
func jwtEnd(line string, i int) int {
	parts := 0
	e := i
	for parts < 5 {
		s := e
		for e < len(line) && csAlnumDash.has(line[e]) {
			e++
		}
		if parts < 2 && (e-s < 10 || !strings.HasPrefix(line[s:], "eyJ")) {
			return 0
		}
		parts++
		if e >= len(line) || line[e] != '.' || parts == 5 {
			break
		}
		e++
	}
	if parts < 3 {
		return 0
	}
	if e > 0 && line[e-1] == '.' {
		e--
	}
	return e
}

// structuredToken recognises, at i: a Telegram bot token (8 to 10 digits,
// ":", "AA" and 33 base64url bytes), a Mailchimp key (32 hex, "-us", one or
// two digits) and a Mailgun key (32 hex, "-", 8 hex, "-", 8 hex). It
// returns the token's end and kind, or 0.
func structuredToken(line string, i int) (int, string) {
	e := i
	for e < len(line) && isDigit(line[e]) {
		e++
	}
	if d := e - i; d >= 8 && d <= 10 && strings.HasPrefix(line[e:], ":AA") {
		t := e + 1
		for t < len(line) && csAlnumDash.has(line[t]) {
			t++
		}
		if t-e-1 >= 35 && (t >= len(line) || !isNameByte(line[t])) {
			return t, "vendor:telegram"
		}
	}
	e = i
	for e < len(line) && (isDigit(line[e]) || line[e] >= 'a' && line[e] <= 'f') {
		e++
	}
	if e-i != 32 || e >= len(line) || line[e] != '-' {
		return 0, ""
	}
	if strings.HasPrefix(line[e:], "-us") {
		t := e + 3
		for t < len(line) && isDigit(line[t]) && t-e-3 < 2 {
			t++
		}
		if t > e+3 && (t >= len(line) || !isNameByte(line[t])) && hasLetterAndDigit(line[i:e]) {
			return t, "vendor:mailchimp"
		}
	}
	t := e + 1
	ok := true
	for part := 0; part < 2 && ok; part++ {
		s := t
		for t < len(line) && (isDigit(line[t]) || line[t] >= 'a' && line[t] <= 'f') {
			t++
		}
		ok = t-s == 8
		if part == 0 {
			ok = ok && t < len(line) && line[t] == '-'
			t++
		}
	}
	if ok && (t >= len(line) || !isNameByte(line[t])) && hasLetterAndDigit(line[i:e]) {
		return t, "vendor:mailgun"
	}
	return 0, ""
}

// azureADSecret recognises an Azure AD (Entra) client secret at i: 3
// bytes, a digit, "Q~", then 31 to 34 bytes of [A-Za-z0-9_~.-]. It returns
// the end, or 0.
func azureADSecret(line string, i int) int {
	if i+6 > len(line) || !isDigit(line[i+3]) || line[i+4] != 'Q' || line[i+5] != '~' {
		return 0
	}
	az := func(c byte) bool { return isAlnum(c) || c == '_' || c == '~' || c == '.' || c == '-' }
	for k := i; k < i+3; k++ {
		if !az(line[k]) {
			return 0
		}
	}
	e := i + 6
	for e < len(line) && az(line[e]) {
		e++
	}
	if n := e - i - 6; n < 31 || n > 34 {
		return 0
	}
	return e
}

// webhookHosts are URL prefixes whose path is itself the credential
// (anyone holding it can post).
var webhookHosts = []string{
	"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/",
	"discord.com/api/webhooks/", "discordapp.com/api/webhooks/", "webhook.office.com/webhookb2/",
	"outlook.office.com/webhook/", "chat.googleapis.com/v1/spaces/",
}

// webhookSpans replaces the path after a webhook host (16 bytes or more).
func webhookSpans(line string, out []span) []span {
	for _, h := range webhookHosts {
		from := 0
		for {
			k := strings.Index(line[from:], h)
			if k < 0 {
				break
			}
			s := from + k + len(h)
			e := s
			for e < len(line) && (isAlnum(line[e]) || strings.IndexByte("/_-.+=%?&", line[e]) >= 0) {
				e++
			}
			if e-s >= 16 && !fakeBody(line[s:e]) {
				out = append(out, span{s, e, "webhook"})
			}
			from = max(e, s)
		}
	}
	return out
}

// fakeBody reports a token body that is an example: it holds EXAMPLE (AWS's
// documented AKIAIOSFODNN7EXAMPLE) or FAKE, eight or more repeats of one byte
// (ghp_xxxxxxxx…), or a run such as 1234567890.
func fakeBody(b string) bool {
	if strings.Contains(b, "EXAMPLE") || strings.Contains(b, "example") || strings.Contains(b, "Example") ||
		strings.Contains(b, "FAKE") || strings.Contains(b, "fake") || strings.Contains(b, "Fake") {
		return true
	}
	if strings.Contains(b, "1234567890") || strings.Contains(b, "0123456789") || strings.Contains(b, "abcdefghij") ||
		strings.Contains(b, "ABCDEFGHIJ") {
		return true
	}
	run := 1
	for i := 1; i < len(b); i++ {
		if b[i] == b[i-1] {
			run++
			if run >= 8 {
				return true
			}
		} else {
			run = 1
		}
	}
	return false
}

// hasLetterAndDigit reports a body holding both a letter and a digit.
func hasLetterAndDigit(b string) bool {
	l, d := false, false
	for i := 0; i < len(b); i++ {
		switch {
		case isDigit(b[i]):
			d = true
		case isUpper(b[i]) || isLower(b[i]):
			l = true
		}
	}
	return l && d
}

// keyShaped reports whether the body of an "sk-" token looks like a key
// and not like a kebab-case name ("sk-learn-classification-notes"):
// letters and digits both, at most three separators, and one run without
// a separator of at least min bytes.
func keyShaped(body string, min int) bool {
	letters, digits, seps, run, best := 0, 0, 0, 0, 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case isDigit(c):
			digits++
			run++
		case isUpper(c) || isLower(c):
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
