// Package redacttest generates fake credentials for tests: random values
// in the shape of real ones (never a real credential; each value unique,
// new on every run), placed in the texts and commands where agents meet
// them (.env files, kubeconfigs, curl -v, CI logs, exception messages,
// connection strings). Tests send each case through every door of omni and
// then look for the values everywhere omni writes.
package redacttest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Case is one fake credential in context.
type Case struct {
	// Kind names the credential shape and its context ("env", "stripe",
	// "pem-json", "cmd-pgpassword", …).
	Kind string
	// Text is what a tool prints (a file, a log, a command's output); for a
	// command case it is the command line.
	Text string
	// Values are the secret parts of Text; none may survive redaction.
	Values []string
	// Command reports that Text is a command line (a Bash tool_input), not
	// an output.
	Command bool
}

// Gen draws fake values from a seeded source; every value it returns is
// unique for the Gen.
type Gen struct {
	r    *rand.Rand
	seen map[string]bool
	// Seed is the seed the Gen was made with (print it to reproduce a run).
	Seed uint64
}

// New returns a Gen seeded with seed (0: a random seed).
func New(seed uint64) *Gen {
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seen: map[string]bool{}, Seed: seed}
}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowerAN = "abcdefghijklmnopqrstuvwxyz0123456789"
	upperAN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexd    = "0123456789abcdef"
	b64url  = alnum + "-_"
	pwChars = alnum + "!%^*+-_@"
)

// looksPlaceholder mirrors what redaction leaves alone as an example, so a
// random draw that happens to spell one is drawn again.
func looksPlaceholder(v string) bool {
	l := strings.ToLower(v)
	for _, w := range []string{"xxxx", "example", "1234567890", "0123456789", "abcdefgh", "dummy", "fake", "here",
		"your", "change", "placeholder", "redacted", "insert", "sample", "notreal"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	// A printf verb after a separator reads as a format string ("%d",
	// "@%s").
	for i := 0; i+1 < len(v); i++ {
		if v[i] == '%' && strings.IndexByte("sdv", v[i+1]) >= 0 && (i == 0 || strings.IndexByte(":=/@", v[i-1]) >= 0) {
			return true
		}
	}
	run := 1
	for i := 1; i < len(v); i++ {
		if v[i] == v[i-1] {
			if run++; run >= 4 {
				return true
			}
		} else {
			run = 1
		}
	}
	return false
}

// draw returns n random bytes of set, with a letter and a digit when the
// set has both, unique for the Gen.
func (g *Gen) draw(set string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[g.r.IntN(len(set))]
		}
		s := string(b)
		if strings.ContainsAny(set, "0123456789") && strings.ContainsAny(set, "abcdefABCDEF") && n >= 8 &&
			(!strings.ContainsAny(s, "0123456789") || !strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")) {
			continue
		}
		if looksPlaceholder(s) || g.seen[s] {
			continue
		}
		g.seen[s] = true
		return s
	}
}

// password is a 14 to 20 character password with a symbol and a digit.
func (g *Gen) password() string {
	for {
		p := g.draw(pwChars, 14+g.r.IntN(7))
		// A lower-case letter too: all capitals, digits and "_" read as
		// the name of another setting (PASSWORD=OTHER_NAME), which
		// redaction leaves.
		if strings.ContainsAny(p, "!%^*+-_@") && strings.IndexByte("-@*!&", p[0]) < 0 && strings.ContainsAny(p, "abcdefghijklmnopqrstuvwxyz") {
			return p
		}
	}
}

func (g *Gen) b64(n int) string {
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(g.r.IntN(256))
	}
	s := base64.StdEncoding.EncodeToString(raw)
	if looksPlaceholder(s) || g.seen[s] {
		return g.b64(n)
	}
	g.seen[s] = true
	return s
}

// jwt is a three-part token with JSON header and payload.
func (g *Gen) jwt() string {
	enc := base64.RawURLEncoding
	h := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	p := enc.EncodeToString([]byte(fmt.Sprintf(`{"sub":"%s","iat":%d}`, g.draw(lowerAN, 12), 1700000000+g.r.IntN(1e7))))
	return h + "." + p + "." + g.draw(b64url, 43)
}

// pemBody returns n lines of 64 base64 characters.
func (g *Gen) pemBody(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = g.b64(48)
	}
	return lines
}

// Cases returns one case per kind, every value fresh.
func (g *Gen) Cases() []Case {
	var cs []Case
	add := func(kind, text string, values ...string) {
		cs = append(cs, Case{Kind: kind, Text: text, Values: values})
	}
	cmd := func(kind, text string, values ...string) {
		cs = append(cs, Case{Kind: kind, Text: text, Values: values, Command: true})
	}
	pw := g.password
	tok := func(n int) string { return g.draw(alnum, n) }
	// basic is base64 of user:password, drawn again when the encoding
	// happens to spell a placeholder ("fake" inside the base64).
	basic := func(user string) string {
		for {
			if v := base64.StdEncoding.EncodeToString([]byte(user + ":" + pw())); !looksPlaceholder(v) {
				return v
			}
		}
	}

	// Assignments with credential names, in every syntax.
	v := pw()
	add("env", "HOME=/home/dev\nDB_PASSWORD="+v+"\nLOG_LEVEL=debug\n", v)
	v = "ghp_" + tok(36)
	add("env-export", "export GITHUB_TOKEN="+v+"\n", v)
	v = pw()
	add("yaml", "database:\n  host: db.internal\n  password: "+v+"\n  pool: 5\n", v)
	v = pw()
	add("yaml-passphrase", "signing:\n  key_file: /etc/keys/sign.pem\n  passphrase: \""+v+"\"\n", v)
	v = tok(32)
	add("json", `{"name": "svc", "api_key": "`+v+`", "retries": 3}`+"\n", v)
	v = tok(40)
	add("toml", "[auth]\nsecret_key = \""+v+"\"\nttl = 3600\n", v)
	v = pw()
	add("ini", "[database]\nuser = app\npassword = "+v+"\n", v)
	v = pw()
	add("properties", "spring.datasource.url=jdbc:postgresql://db/app\nspring.datasource.password="+v+"\n", v)
	v = pw()
	add("xml", "<config>\n  <username>app</username>\n  <password>"+v+"</password>\n</config>\n", v)
	v = pw()
	add("xml-appsettings", "<appSettings>\n  <add key=\"DbPassword\" value=\""+v+"\" />\n</appSettings>\n", v)
	v = tok(24)
	add("go-struct", "cfg := Config{\n\tUser:     \"app\",\n\tPassword: \""+v+"\",\n}\n", v)
	v, v2 := pw(), pw()
	add("python", "DATABASE = {\n    'USER': 'app',\n    'PASSWORD': '"+v+"',\n}\npassword = \""+v2+"\"\n", v, v2)
	v = pw()
	add("python-kwargs", "conn = psycopg2.connect(host=\"db\", user=\"app\", password=\""+v+"\")\n", v)
	v = tok(32)
	add("go-setenv", "os.Setenv(\"SERVICE_API_TOKEN\", \""+v+"\")\n", v)
	v = pw()
	add("yaml-flow", "credentials: { user: app, password: "+v+" }\n", v)
	v = pw()
	add("k8s-env", "env:\n  - name: DB_PASSWORD\n    value: \""+v+"\"\n  - name: LOG_LEVEL\n    value: info\n", v)

	// URLs.
	v = pw()
	add("url-userinfo", "connecting to postgres://app:"+v+"@db.internal:5432/app\n", v)
	v = "ghp_" + tok(36)
	add("url-token", "remote: https://"+v+"@github.com/acme/api.git\n", v)
	v = g.draw(hexd, 40)
	add("url-token-generic", "fetch https://"+v+"@git.acme.dev/acme/api.git\n", v)
	v = tok(32)
	add("url-api-key", "GET https://api.weather.dev/v1/forecast?city=Oslo&api_key="+v+"&units=metric 200\n", v)
	v = pw()
	add("url-password", "redirect to /login?user=app&password="+v+"\n", v)
	v = g.draw(b64url, 43)
	add("url-sas-sig", "https://acct.blob.core.windows.net/c/b.tar?sv=2022-11-02&se=2030-01-01&sp=r&sig="+v+"\n", v)
	v = tok(40)
	add("url-token-param", "wss://stream.acme.dev/feed?token="+v+"\n", v)

	// HTTP.
	v = tok(40)
	add("http-bearer", "> GET /v1/me HTTP/2\n> Host: api.acme.dev\n> Authorization: Bearer "+v+"\n> Accept: */*\n", v)
	v = basic("app")
	add("http-basic", "< WWW-Authenticate: Basic\n> Authorization: Basic "+v+"\n", v)
	v = tok(32)
	add("http-x-api-key", "curl -s -H \"X-Api-Key: "+v+"\" https://api.acme.dev/v1/items\n", v)
	v = tok(48)
	add("http-cookie", "> Cookie: session="+v+"; theme=dark\n", v)

	// PEM in every encoding.
	body := g.pemBody(4)
	add("pem", "-----BEGIN RSA PRIVATE KEY-----\n"+strings.Join(body, "\n")+"\n-----END RSA PRIVATE KEY-----\n", body...)
	body = g.pemBody(3)
	add("pem-json", `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n`+strings.Join(body, `\n`)+`\n-----END PRIVATE KEY-----\n", "client_email": "svc@acme.iam"}`+"\n", body...)
	body = g.pemBody(3)
	add("pem-truncated", "key.pem:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"+strings.Join(body, "\n")+"\n", body...)
	body = g.pemBody(2)
	add("pem-one-line", "KEY=-----BEGIN EC PRIVATE KEY----- "+strings.Join(body, " ")+" -----END EC PRIVATE KEY-----\n", body...)
	body = g.pemBody(2)
	add("pem-escaped-in-text", "error: bad key \"-----BEGIN PRIVATE KEY-----\\n"+strings.Join(body, "\\n")+"\\n-----END PRIVATE KEY-----\"\n", body...)

	// Tokens.
	v = g.jwt()
	add("jwt", "2026-01-02T10:00:00Z INFO auth ok user=42 jwt="+v+" path=/v1\n", v)
	v = g.jwt()
	add("jwt-log", "level=debug msg=\"verified\" token "+v+"\n", v)
	v = g.b64(24)
	v2 = g.b64(600)
	add("kubeconfig", "users:\n- name: admin\n  user:\n    token: "+v+"\n    client-key-data: "+v2+"\n", v, v2)
	v = basic("bot")
	add("docker-config", "{\n  \"auths\": {\n    \"registry.acme.dev\": {\n      \"auth\": \""+v+"\"\n    }\n  }\n}\n", v)
	v = "npm_" + tok(36)
	add("npmrc", "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken="+v+"\n", v)
	v = tok(32)
	add("npmrc-legacy", "//npm.acme.dev/:_authToken="+v+"\nalways-auth=true\n", v)
	v = pw()
	add("netrc", "machine api.acme.dev login bot password "+v+"\n", v)
	v = pw()
	add("netrc-multiline", "machine git.acme.dev\n  login bot\n  password "+v+"\n", v)
	v = pw()
	add("pgpass", "db.internal:5432:app:app:"+v+"\n", v)
	v = g.b64(64)
	add("azure-storage", "DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey="+v+";EndpointSuffix=core.windows.net\n", v)
	v = g.b64(32)
	add("azure-servicebus", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="+v+"\n", v)
	v = g.draw(alnum+"_-.", 3) + fmt.Sprint(g.r.IntN(10)) + "Q~" + g.draw(alnum+"_-.~", 34)
	add("azure-ad-secret", "client secret is "+v+"\n", v)

	// Vendor tokens, each standing alone in an output.
	vendorsDrawn := []struct {
		kind, prefix, set string
		n                 int
	}{
		{"stripe-secret", "sk_live_", alnum, 99}, {"stripe-restricted", "rk_live_", alnum, 99},
		{"openai-project", "sk-proj-", b64url, 120}, {"openai-svcacct", "sk-svcacct-", b64url, 120},
		{"openai-legacy", "sk-", alnum, 48}, {"google-api", "AIza", b64url, 35},
		{"aws-akia", "AKIA", upperAN, 16}, {"aws-asia", "ASIA", upperAN, 16},
		{"digitalocean", "dop_v1_", hexd, 64}, {"shopify", "shpat_", hexd, 32}, {"twilio", "SK", hexd, 32},
		{"mailgun", "key-", hexd, 32}, {"slack-bot", "xoxb-", lowerAN, 50}, {"github-pat", "github_pat_", alnum + "_", 82},
		{"github-oauth", "gho_", alnum, 36}, {"gitlab", "glpat-", b64url, 20}, {"huggingface", "hf_", alnum, 34},
		{"npm", "npm_", alnum, 36}, {"vault", "hvs.", b64url, 90}, {"databricks", "dapi", hexd, 32},
		{"sendgrid", "SG.", b64url, 22}, {"groq", "gsk_", alnum, 52}, {"docker-pat", "dckr_pat_", b64url, 27},
		{"grafana", "glsa_", alnum, 40}, {"tailscale", "tskey-auth-", alnum, 40}, {"pulumi", "pul-", hexd, 40},
		{"linear", "lin_api_", alnum, 40}, {"postman", "PMAK-", hexd, 59}, {"doppler", "dp.pt.", alnum, 43},
		{"age", "AGE-SECRET-KEY-1", upperAN, 58}, {"replicate", "r8_", alnum, 37},
	}
	for _, vd := range vendorsDrawn {
		v := vd.prefix + g.draw(vd.set, vd.n)
		if vd.kind == "sendgrid" {
			v += "." + g.draw(b64url, 43)
		}
		add(vd.kind, "using credential "+v+" for the request\n", v)
	}
	v = "sk-ant-api03-" + g.draw(b64url, 93) + "AA"
	add("anthropic-in-exception", "anthropic.AuthenticationError: Error code: 401 - invalid x-api-key '"+v+"' (request_id=req_"+tok(24)+")\n", v)
	v = "T" + g.draw(upperAN, 10) + "/B" + g.draw(upperAN, 10) + "/" + tok(24)
	add("slack-webhook", "posting to https://hooks.slack.com/services/"+v+"\n", v)
	v = fmt.Sprint(100000000+g.r.IntN(899999999)) + ":AA" + g.draw(b64url, 33)
	add("telegram", "bot token "+v+"\n", v)
	v = g.b64(30)
	add("aws-secret", "[default]\naws_access_key_id = AKIA"+g.draw(upperAN, 16)+"\naws_secret_access_key = "+v+"\n", v)
	v = g.draw(hexd, 32) + "-us" + fmt.Sprint(1+g.r.IntN(20))
	add("mailchimp", "mailchimp key "+v+"\n", v)

	// Commands that carry a secret.
	v = tok(40)
	cmd("cmd-curl-bearer", `curl -s -H "Authorization: Bearer `+v+`" https://api.acme.dev/v1/me`, v)
	v = pw()
	cmd("cmd-pgpassword", "PGPASSWORD='"+v+"' psql -h db.internal -U app -c 'select 1'", v)
	v = "ghp_" + tok(36)
	cmd("cmd-export", "export GITHUB_TOKEN="+v+" && gh repo list", v)
	v = pw()
	cmd("cmd-git-clone", "git clone https://bot:"+v+"@git.acme.dev/acme/api.git", v)
	v = pw()
	cmd("cmd-docker-login", "docker login -u bot -p "+v+" registry.acme.dev", v)
	v = "sk-ant-api03-" + g.draw(b64url, 93) + "AA"
	cmd("cmd-anthropic-env", "ANTHROPIC_API_KEY="+v+" claude -p hello", v)
	v = pw()
	cmd("cmd-mysql", "mysql -u root -p"+v+" -h 127.0.0.1 app -e 'show tables'", v)
	v = pw()
	cmd("cmd-password-flag", "vault login -method=userpass username=bot password="+v, v)
	v = pw()
	cmd("cmd-sshpass", "sshpass -p '"+v+"' ssh bot@host uptime", v)
	v = tok(32)
	cmd("cmd-token-flag", "gh auth login --with-token --hostname git.acme.dev --token "+v, v)
	v = pw()
	cmd("cmd-curl-user", "curl -u bot:"+v+" https://ci.acme.dev/api/json", v)

	// Key/value tables a CLI prints.
	names := []string{"password", "api_key", "db_password", "client_secret", "access_token", "SECRET_KEY_BASE", "auth-token"}
	name := func() string { return names[g.r.IntN(len(names))] }
	v = pw()
	add("table-vault", "====== Data ======\nKey         Value\n---         -----\n"+name()+"    "+v+"\nttl         768h\n", v)
	v = tok(20 + g.r.IntN(20))
	add("table-aligned", "NAME                 VALUE\n"+strings.ToUpper(name())+strings.Repeat(" ", 2+g.r.IntN(6))+v+"\nREGION  eu-west-1\n", v)
	v = pw()
	add("table-box", "┌─────────────┬──────────────────────┐\n│ NAME        │ VALUE                │\n│ "+strings.ToUpper(name())+" │ "+v+" │\n│ LOG_LEVEL   │ info                 │\n", v)
	v = tok(32)
	add("table-markdown", "| key | value |\n|---|---|\n| "+name()+" | "+v+" |\n| region | us-east-1 |\n", v)
	v = g.draw(hexd, 64)
	add("table-tab", "key\tvalue\n"+name()+"\t"+v+"\n", v)

	v = pw()
	add("table-columns", "USERNAME"+strings.Repeat(" ", 2+g.r.IntN(4))+"PASSWORD"+strings.Repeat(" ", 2+g.r.IntN(10))+"HOST\nadmin   "+v+"   db1.internal\n", v)
	v = tok(32)
	add("table-columns-markdown", "| user | api_key | region |\n|------|---------|--------|\n| bot | "+v+" | eu-west-1 |\n", v)

	v = pw()
	add("table-name-value", "Name                 Type          Value                  Version\n----                 ----          -----                  -------\n/prod/db/"+name()+"   SecureString  "+v+"   3\n/prod/db/host        String        db.internal            1\n", v)

	v = tok(24 + g.r.IntN(16))
	add("table-title-name", []string{"API Key", "Client Secret", "Access Token", "Secret Access Key"}[g.r.IntN(4)]+":"+strings.Repeat(" ", 1+g.r.IntN(6))+v+"\n", v)
	h := g.draw(hexd, 32)
	v = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	add("consul-secret-id", "AccessorID:       6a1c2f3e-8b7d-4c1a-9e2f-3d4c5b6a7f80\nSecretID:         "+v+"\nDescription:      ci\n", v)
	v = tok(32)
	add("key-value-lines", "Key: api_token\nValue: "+v+"\n", v)

	// Struct dumps.
	v = pw()
	add("struct-go", "config: &{Host:db.internal Port:5432 User:app Password:"+v+" SSLMode:disable}\n", v)
	v = tok(24)
	add("struct-go-map", "settings map[api_key:"+v+" region:us-east-1 retries:3]\n", v)
	v = pw()
	add("struct-go-sharp", "main.Config{Host:\"db\", Port:5432, Password:\""+v+"\"}\n", v)
	v = tok(30)
	add("struct-rust", "Credentials { user: \"app\", secret: \""+v+"\" }\n", v)
	v = pw()
	add("struct-java", "DataSource{url='jdbc:postgresql://db/app', username='app', password='"+v+"'}\n", v)
	v = tok(28)
	add("struct-python", "Settings(debug=False, api_token='"+v+"', region='eu')\n", v)

	// A private key in numbered views.
	body = g.pemBody(3)
	add("pem-cat-n", numbered("-----BEGIN RSA PRIVATE KEY-----\n"+strings.Join(body, "\n")+"\n-----END RSA PRIVATE KEY-----\n", "%6d\t"), body...)
	body = g.pemBody(3)
	add("pem-less-n", numbered("-----BEGIN OPENSSH PRIVATE KEY-----\n"+strings.Join(body, "\n")+"\n-----END OPENSSH PRIVATE KEY-----\n", "%7d "), body...)
	body = g.pemBody(3)
	add("pem-bat", numbered("-----BEGIN EC PRIVATE KEY-----\n"+strings.Join(body, "\n")+"\n-----END EC PRIVATE KEY-----\n", "%4d │ "), body...)
	body = g.pemBody(3)
	add("pem-grep-n", numbered("-----BEGIN PRIVATE KEY-----\n"+strings.Join(body, "\n")+"\n-----END PRIVATE KEY-----\n", "keys/id.pem:%d:"), body...)

	// A secret given to a CLI's configuration command.
	v = g.b64(30)
	cmd("cmd-aws-configure-set", "aws configure set aws_secret_access_key "+v+" --profile ci", v)
	v = "npm_" + tok(36)
	cmd("cmd-npm-config-set", "npm config set //registry.npmjs.org/:_authToken "+v, v)
	v = tok(40)
	cmd("cmd-git-config", "git config --global github.token "+v, v)
	v = tok(36)
	cmd("cmd-yarn-config-set", "yarn config set npmAuthToken "+v+" -H", v)
	v = tok(32)
	cmd("cmd-conda-config", "conda config --set channel_token "+v, v)
	v = "pypi-" + g.draw(b64url, 60)
	cmd("cmd-poetry-config", "poetry config pypi-token.pypi "+v, v)
	v = tok(40)
	cmd("cmd-ngrok-authtoken", "ngrok config add-authtoken "+v, v)
	v = tok(32)
	cmd("cmd-wrangler-secret", "wrangler secret put API_KEY <<< "+v, v)
	v = pw()
	cmd("cmd-keyvault-set", "az keyvault secret set --vault-name kv1 --name db-password --value '"+v+"'", v)
	return cs
}

// numbered prefixes each line of s with its number in format f (a
// Printf verb with one %d).
func numbered(s, f string) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString(fmt.Sprintf(f, i+1) + l)
	}
	return b.String() + "\n"
}

// PrintedCase is the output of a command whose name says it prints a
// credential: Values appear bare in Text, with nothing naming them.
type PrintedCase struct {
	Kind    string
	Command string
	Text    string
	Values  []string
}

// PrintedCases returns one case per printing command, every value fresh.
func (g *Gen) PrintedCases() []PrintedCase {
	var cs []PrintedCase
	add := func(kind, command, text string, values ...string) {
		cs = append(cs, PrintedCase{kind, command, text, values})
	}
	uuid := func() string {
		h := g.draw(hexd, 32)
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	v := uuid()
	add("heroku-auth-token", "heroku auth:token", v+"\n", v)
	v = g.draw(b64url, 120+g.r.IntN(60))
	add("gcloud-print-access-token", "gcloud auth print-access-token --account ci@acme.iam", v+"\n", v)
	k, sec, st := "ASIA"+g.draw(upperAN, 16), g.b64(30), g.b64(200)
	add("aws-get-session-token", "aws sts get-session-token --duration-seconds 900 --output text",
		"CREDENTIALS\t"+k+"\t2026-03-04T05:06:07+00:00\t"+sec+"\t"+st+"\n", k, sec, st)
	v = g.b64(600)
	add("aws-ecr-get-login-password", "aws ecr get-login-password --region eu-west-1", v+"\n", v)
	v = g.draw(alnum, 40)
	add("gh-auth-token", "gh auth token --hostname git.acme.dev", v+"\n", v)
	v = g.password()
	add("cat-secret-file", "cat /run/secrets/db_password", v+"\n", v)
	v = g.draw(b64url, 48)
	add("doctl-token", "doctl auth token", v+"\n", v)
	v = g.password()
	add("vault-field", "vault kv get -field=password secret/prod/db", v+"\n", v)
	v = g.password()
	add("op-read", "op read \"op://Private/db/password\"", v+"\n", v)
	v = g.password()
	add("kubectl-jsonpath", "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d", v, v)
	v = g.password()
	add("pass-show", "pass show prod/db", v+"\n", v)
	v = g.password()
	add("security-find-password", "security find-generic-password -s deploy -w", v+"\n", v)
	v = g.draw(alnum, 32)
	add("secretsmanager", "aws secretsmanager get-secret-value --secret-id prod/api --query SecretString --output text", v+"\n", v)
	return cs
}
