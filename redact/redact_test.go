package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactTable(t *testing.T) {
	cases := []struct {
		in, want string
		n        int
	}{
		// The reference's NAME=value rule.
		{"GITHUB_TOKEN=ghp_abc123\n", "GITHUB_TOKEN=[REDACTED]\n", 1},
		{"export AWS_SECRET_ACCESS_KEY=\"abc/def+ghi\"\n", "export AWS_SECRET_ACCESS_KEY=\"[REDACTED]\"\n", 1},
		{"MYPASSWORD=hunter2", "MYPASSWORD=[REDACTED]", 1},
		{"DB_PASSWORD=$DB_PASSWORD\n", "DB_PASSWORD=$DB_PASSWORD\n", 0},
		{"TOKEN=${TOKEN}\nAPI_KEY=$(cat key)\n", "TOKEN=${TOKEN}\nAPI_KEY=$(cat key)\n", 0},
		{"SECRET=$3cr3t\n", "SECRET=[REDACTED]\n", 1},
		{"PASSED=12\nAUTHORS=me\nMONKEYS=3\n", "PASSED=12\nAUTHORS=me\nMONKEYS=3\n", 0},
		{"primary_key=id\nssh_key={props.key}\n", "primary_key=id\nssh_key={props.key}\n", 0},
		{"JWT_SIGNING_KEY=q8Zt-jwt-k3y\n", "JWT_SIGNING_KEY=[REDACTED]\n", 1},
		{"pass=3/10\n", "pass=3/10\n", 0},
		{"PASSWORD=\n", "PASSWORD=\n", 0},
		{"AWS_REGION=eu-west-1\nPASSWORD_FILE=/run/secrets/db\n", "AWS_REGION=eu-west-1\nPASSWORD_FILE=/run/secrets/db\n", 0},
		{"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", 0}, // the documentation example
		{"AWS_ACCESS_KEY_ID=AKIA2E0A8F3B244C9986\n", "AWS_ACCESS_KEY_ID=[REDACTED]\n", 1},
		// YAML and headers.
		{"db:\n  password: s3cr3t\n  user: app\n", "db:\n  password: [REDACTED]\n  user: app\n", 1},
		{"  api_token: \"abc.def\"\n", "  api_token: \"[REDACTED]\"\n", 1},
		{"  private_key: |\n", "  private_key: |\n", 0},
		{"  enabled_auth: true\n", "  enabled_auth: true\n", 0},
		{"PASS: test_login\n", "PASS: test_login\n", 0},
		{"> Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig\r\n", "> Authorization: Bearer [REDACTED]\r\n", 1},
		{"Authorization: Basic dXNlcjpwYXNz\n", "Authorization: Basic dXNlcjpwYXNz\n", 0}, // user:pass
		{"Authorization: Basic ZGVwbG95OlpxOCF4MkxtOQ==\n", "Authorization: Basic [REDACTED]\n", 1},
		{`curl -H "Authorization: token ghp_9a8b7c6d5e" https://api`, `curl -H "Authorization: token [REDACTED]" https://api`, 1},
		{"sent header Bearer q1w2e3r4t5y6u7i8\n", "sent header Bearer [REDACTED]\n", 1},
		{"< Set-Cookie: sid=abc123; Path=/\n", "< Set-Cookie: [REDACTED]\n", 1},
		// URLs with passwords.
		{"connecting to postgres://app:s3cr3t@db:5432/app\n", "connecting to postgres://app:[REDACTED]@db:5432/app\n", 1},
		{"redis://:pw9Xk@127.0.0.1:6379/0 and https://example.com/x@y\n", "redis://:[REDACTED]@127.0.0.1:6379/0 and https://example.com/x@y\n", 1},
		{"git clone https://user@github.com/x.git\n", "git clone https://user@github.com/x.git\n", 0},
		// A data store's URL without a password names a place, not a secret
		// (a compose file's DATABASE_URL was redacted whole); with a password
		// or a credential query parameter it is still one.
		{"      DATABASE_URL: postgres://billing@db:5432/billing\n", "      DATABASE_URL: postgres://billing@db:5432/billing\n", 0},
		{"REDIS_URL=redis://cache:6379/0\nMONGO_URL=mongodb+srv://app@c0.mongodb.net/x?retryWrites=true\n", "REDIS_URL=redis://cache:6379/0\nMONGO_URL=mongodb+srv://app@c0.mongodb.net/x?retryWrites=true\n", 0},
		{"DSN=jdbc:postgresql://db/app?user=app&sslmode=require\n", "DSN=jdbc:postgresql://db/app?user=app&sslmode=require\n", 0},
		{"DATABASE_URL=postgres://app:s3cr3t@db:5432/app\n", "DATABASE_URL=[REDACTED]\n", 1},
		{"DATABASE_URL=postgres://db/app?password=s3cr3t\n", "DATABASE_URL=[REDACTED]\n", 1},
		{"WEBHOOK_TOKEN=https://hooks.acme.io/services/T0/B0/q8Zt5\n", "WEBHOOK_TOKEN=[REDACTED]\n", 1},
		// Settings about a credential in YAML (a workflow's permissions, a
		// Helm chart's values) are not credentials; values under the same
		// names that are credentials still are.
		{"permissions:\n  id-token: write\n  contents: read\n", "permissions:\n  id-token: write\n  contents: read\n", 0},
		{"  existingSecret: billing-auth\n  tokenLifetime: 15m\n  sessionTokenTTL: 1h30m\n", "  existingSecret: billing-auth\n  tokenLifetime: 15m\n  sessionTokenTTL: 1h30m\n", 0},
		{"  id-token: eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl\n", "  id-token: [REDACTED]\n", 1},
		{"  existing_password: hunter2x\n  secret: 15mq8Zt\n", "  existing_password: [REDACTED]\n  secret: [REDACTED]\n", 2},
		// Under a name that only says "key", a store path and a templated
		// cache key are not key material; a base64 key still is.
		{"      remoteRef:\n        key: secret/data/billing/db\n", "      remoteRef:\n        key: secret/data/billing/db\n", 0},
		{"  cache:\n    key: go-mod-$CI_COMMIT_REF_SLUG\n", "  cache:\n    key: go-mod-$CI_COMMIT_REF_SLUG\n", 0},
		{"  key: q8ZtR2/kXw9PmL4vB7nC1dF6\n", "  key: [REDACTED]\n", 1},
		// JSON and Python fields, anywhere in a line.
		{`{"user": "a", "access_token": "xyz\"q", "max_tokens": 5}`, `{"user": "a", "access_token": "[REDACTED]", "max_tokens": 5}`, 1},
		{`params = {'host': 'h', 'password': 'pw9Xk'}`, `params = {'host': 'h', 'password': '[REDACTED]'}`, 1},
		{`{"token_count": 3, "key": "some words here"}`, `{"token_count": 3, "key": "some words here"}`, 0},
		// Source code is not a credential.
		{"        auth = self.auth\n", "        auth = self.auth\n", 0},
		{"    key = make_key(value, version=version)\n", "    key = make_key(value, version=version)\n", 0},
		{"SESSION_COOKIE_SECURE = True\nSECRET_KEY_MIN_LENGTH = 50\n", "SESSION_COOKIE_SECURE = True\nSECRET_KEY_MIN_LENGTH = 50\n", 0},
		{"            auth=auth,\n", "            auth=auth,\n", 0},
		{"    token = token\n", "    token = token\n", 0},
		{"    password = 'hunter2'\n", "    password = '[REDACTED]'\n", 1},
		{"if x == None:\n    token == other\n", "if x == None:\n    token == other\n", 0},
		// Line-number prefixes of Read, cat -n and grep -n.
		{"     3→API_KEY=sk-live-123\n", "     3→API_KEY=[REDACTED]\n", 1},
		{"     3\tAPI_KEY=sk-live-123\n", "     3\tAPI_KEY=[REDACTED]\n", 1},
		{"config/.env:3:API_KEY=sk-live-123\n", "config/.env:3:API_KEY=[REDACTED]\n", 1},
		// Idempotence.
		{"TOKEN=[REDACTED]\n", "TOKEN=[REDACTED]\n", 0},
	}
	for _, c := range cases {
		got, n := Text(c.in)
		if got != c.want || n != c.n {
			t.Errorf("Text(%q)\n got %q, %d\nwant %q, %d", c.in, got, n, c.want, c.n)
		}
	}
}

func TestRedactPrivateKeyBlock(t *testing.T) {
	in := "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----\ncert:\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	// One [REDACTED] per body line: the text keeps its line count.
	want := "key:\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n[REDACTED]\n-----END RSA PRIVATE KEY-----\ncert:\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	got, n := Text(in)
	if got != want || n != 1 {
		t.Fatalf("got %q, %d", got, n)
	}
	// Indented inside a YAML block scalar: the body keeps its indentation.
	in = "tls.key: |\n  -----BEGIN PRIVATE KEY-----\n  AAAA\n  BBBB\n  -----END PRIVATE KEY-----\n"
	want = "tls.key: |\n  -----BEGIN PRIVATE KEY-----\n  [REDACTED]\n  [REDACTED]\n  -----END PRIVATE KEY-----\n"
	if got, n = Text(in); got != want || n != 1 {
		t.Fatalf("got %q, %d", got, n)
	}
	// One-line JSON with escaped newlines: the field rule takes it.
	in = `{"private_key": "-----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----\n", "type": "service_account"}`
	got, n = Text(in)
	if n != 1 || strings.Contains(got, "AAA") || !json.Valid([]byte(got)) {
		t.Fatalf("got %q, %d", got, n)
	}
}

func TestRedactNoCopyWhenClean(t *testing.T) {
	in := strings.Repeat("ordinary line with key: and = signs == x\n", 100)
	allocs := testing.AllocsPerRun(20, func() { Text(in) })
	if allocs > 0 {
		t.Fatalf("%v allocations for clean text", allocs)
	}
}

// FuzzRedact: no panic; redaction is idempotent; the line count holds
// except where a private key body shrinks to one line; a JSON payload
// stays valid JSON.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"GITHUB_TOKEN=ghp_x\n", `{"token": "abc", "n": 1}`, "> Authorization: Bearer abcdefghijk\n",
		"postgres://u:p@h/db\n", "-----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----\n",
		"password: x\n", `{'password': 'a\'b'}`, "Authorization:", "Bearer ", "://:@", "\"\":\"\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, n := Text(s)
		if n == 0 && out != s {
			t.Fatalf("changed without counting: %q -> %q", s, out)
		}
		again, n2 := Text(out)
		if n2 != 0 || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q (%d)", s, out, again, n2)
		}
		if !strings.Contains(s, "PRIVATE KEY") && strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("line count changed: %q -> %q", s, out)
		}
		if json.Valid([]byte(s)) && !json.Valid([]byte(out)) {
			t.Fatalf("JSON broken: %q -> %q", s, out)
		}
	})
}

// TestRedactKnownTokens: standalone vendor keys are redacted wherever they
// stand; look-alikes inside words or too short are not.
func TestRedactKnownTokens(t *testing.T) {
	for in, want := range map[string]string{
		"key is sk-proj-q1w2e3r4t5y6u7i8o9p0a1s2d3f4 ok": "key is [REDACTED] ok",
		"token ghp_q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7":   "token [REDACTED]",
		"id AKIAIOSFODNN7EXAMPLE here":                   "id AKIAIOSFODNN7EXAMPLE here",
		"id AKIA2E0A8F3B244C9986 here":                   "id [REDACTED] here",
		"task-sk-abc and desk-top":                       "task-sk-abc and desk-top",
		"sk-short":                                       "sk-short",
	} {
		got, _ := Text(in + "\n")
		if got != want+"\n" && !(want == in && got == in+"\n") {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactPEMMentionIsNotABlock: a line that only mentions a PEM header
// (code, a JSON string) starts no key block, and no line is lost.
func TestRedactPEMMentionIsNotABlock(t *testing.T) {
	for _, in := range []string{
		"package x\n\nconst hdr = \"-----BEGIN RSA PRIVATE KEY-----\"\nfunc a() {}\nfunc b() {}\n",
		"{\n  \"pem\": [\"-----BEGIN PRIVATE KEY-----\", \"MIIE\", \"-----END PRIVATE KEY-----\"]\n}\n",
		"-----BEGIN PRIVATE KEY-----\nno end line follows\n",
	} {
		got, _ := Text(in)
		if strings.Count(got, "\n") != strings.Count(in, "\n") {
			t.Errorf("Redact changed the line count of %q: %q", in, got)
		}
		if strings.Contains(in, "func b") && got != in {
			t.Errorf("Text(%q) = %q", in, got)
		}
	}
}

// TestRedactNoFalsePositives: words that only look like credentials stay.
func TestRedactNoFalsePositives(t *testing.T) {
	for _, in := range []string{
		"authorization: failed for user bob",
		"    auth_test.go:10: Authorization: header missing in request",
		"token: expired",
		"password: required",
		"see sk-learn-classification-tutorial-notes for details",
		"deploy cluster sk-prod-eu-west-1-nodepool-a done",
	} {
		if got, n := Text(in + "\n"); n != 0 || got != in+"\n" {
			t.Errorf("Text(%q) = %q, %d; want it unchanged", in, got, n)
		}
	}
	for in, want := range map[string]string{
		"Authorization: Bearer abcdef0123456789":        "Authorization: Bearer [REDACTED]",
		"authorization: Basic ZGVwbG95OlpxOCF4MkxtOQ==": "authorization: Basic [REDACTED]",
		"Authorization: 9f8e7d6c5b4a39281706f5e4d3c2":   "Authorization: [REDACTED]",
		"password: hunter2":                             "password: [REDACTED]",
	} {
		if got, _ := Text(in + "\n"); got != want+"\n" {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriterMatchesText: the streaming Writer, fed in pieces of any size,
// writes what Text returns.
func TestWriterMatchesText(t *testing.T) {
	in := "a\nGITHUB_TOKEN=ghp_q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq1w2e3r4\n-----END RSA PRIVATE KEY-----\nlast password: zq8!Tk2@Lm"
	want, _ := Text(in)
	for _, step := range []int{1, 3, 7, 64, len(in)} {
		var b strings.Builder
		w := NewWriter(&b)
		for i := 0; i < len(in); i += step {
			w.Write([]byte(in[i:min(len(in), i+step)]))
		}
		w.Close()
		if b.String() != want {
			t.Fatalf("step %d: got %q, want %q", step, b.String(), want)
		}
	}
}

// FuzzUnquote: the fast JSON string decoder agrees with encoding/json
// whenever it accepts the input.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`a\nb`, `\u00e9\ud83d\ude00`, `\"q\\`, "é", `\ud800`, `\x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := unquote([]byte(s))
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatalf("accepted %q, encoding/json says %v", s, err)
		}
		if got != want {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	})
}

// FuzzJSON: JSON never panics, a valid document stays valid, and a
// document without credentials comes back as the same bytes.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"password":"x9!Lq2z","n":[1,"\"q\\\\"]}`, `["-----BEGIN RSA PRIVATE KEY-----","QUJD"]`,
		`{"tool_response":{"stdout":"TOKEN=ghp_q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8\n"}}`, `"\ud800"`, `{"k":"\u00e9"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, fields := JSON([]byte(s), nil)
		if json.Valid([]byte(s)) && !json.Valid(out) {
			t.Fatalf("JSON broken: %q -> %q", s, out)
		}
		if fields.Total() == 0 && string(out) != s && !strings.Contains(s, "PRIVATE KEY") {
			t.Fatalf("changed without counting: %q -> %q", s, out)
		}
	})
}

// A value masked where its context gives it away is masked wherever else
// it recurs: on a later line of the same text, and in another string of a
// hook payload (the command named it, the output echoes it bare). Red when
// each line or string is judged alone.
func TestMaskedValueRecurs(t *testing.T) {
	const v = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY9x2k4LmQ"
	in := "aws_secret_access_key = " + v + "\nwarning: key " + v + " is old\nbye\n"
	out, n := Text(in)
	if strings.Contains(out, v) || n != 2 {
		t.Fatalf("Text: %d masked, out %q", n, out)
	}
	doc := `{"tool_input":{"command":"curl -H 'Authorization: Bearer ` + v + `' https://api.test/x"},` +
		`"tool_response":{"stdout":"using token ` + v + `\n","stderr":"warning ` + v + `"}}`
	got, fields := JSON([]byte(doc), nil)
	if strings.Contains(string(got), v) || fields["tool_response"] != 2 || fields["tool_input"] != 1 {
		t.Fatalf("JSON: fields %v, out %s", fields, got)
	}
	// A short masked value (a 6-byte password) is not chased through the
	// text: it would blank every word that holds it.
	out, _ = Text("password=admin1\nadmin1 logged in\n")
	if !strings.Contains(out, "admin1 logged in") {
		t.Fatalf("short value propagated: %q", out)
	}
}

// TestShapesNotCredentials: tables, struct dumps and configuration
// commands that name a credential without holding one stay as they are.
func TestShapesNotCredentials(t *testing.T) {
	for _, s := range []string{
		"| `auth.clientType` | `'user-scoped'` | Client identification |\n",
		"NAME            TYPE     DATA   AGE\ndb-password     Opaque   1      5d\n",
		"test_password_reset    PASSED\n",
		"password    required\n",
		"echo \"ANTHROPIC_API_KEY is ${ANTHROPIC_API_KEY:+set}\"\n",
		"git worktree add .worktrees/auth -b feature/auth\n",
		"&{Host:db Password: User:app}\n",
		"&{Token:<nil> Expiry:0001-01-01}\n",
		"kubectl set image deploy/api api=acme/api:v2\n",
		"   access_key     ****************QX7A shared-credentials-file\n",
		"POST key: formX-0-id\nToken generated: czhnsi-a5e812a84ba7\n",
		"NAMESPACE     NAME     TYPE        CLUSTER-IP   PORT(S)\nauth          svc-01   ClusterIP   10.96.1.11   8001/TCP\n",
	} {
		if got, n := Text(s); got != s || n != 0 {
			t.Errorf("Text(%q) = %q, %d", s, got, n)
		}
	}
}
