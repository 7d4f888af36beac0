package pipeline

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/sharedtest"
)

type sniffCase struct {
	name string
	text string
	want Kind
}

// sniffBase64Wrapped is 300 random bytes in base64, wrapped at 76 columns
// as the base64 tool prints it.
func sniffBase64Wrapped() string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 300)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 76 {
		out.WriteString(s[:76] + "\n")
		s = s[76:]
	}
	out.WriteString(s + "\n")
	return out.String()
}

// sniffCases are the table cases; the fuzz targets start from them too.
var sniffCases = []sniffCase{
	// Empty.
	{"empty", "", KindNone},
	{"whitespace only", " \n\t\r\n  ", KindNone},

	// 1. JSON.
	{"json object", `{"a": 1, "b": [2, 3]}`, KindJSON},
	{"json array padded", "  [1, 2, 3]  \n", KindJSON},
	{"json empty array", "[]", KindJSON},
	{"json pretty", "{\n  \"kind\": \"List\",\n  \"items\": [\n    {\"n\": 1}\n  ]\n}\n", KindJSON},
	{"json crlf", "{\r\n  \"a\": 1\r\n}\r\n", KindJSON},
	{"json oversized: brackets decide", "{" + strings.Repeat("x", sniffMaxJSONParseBytes) + "}", KindJSON},
	{"bracketed non-json", "{not json}", KindNone},
	{"json scalar is not a document", `"just a string"`, KindNone},

	// 2. NDJSON.
	{"ndjson", "{\"ts\": 1, \"msg\": \"a\"}\n{\"ts\": 2, \"msg\": \"b\"}\n{\"ts\": 3, \"msg\": \"c\"}\n", KindNDJSON},
	{"ndjson objects and arrays, blank line", "{\"a\":1}\n\n[1,2]\n", KindNDJSON},
	{"ndjson go test -json", `{"Time":"2026-11-29T10:35:02Z","Action":"start","Package":"example.com/p"}
{"Time":"2026-11-29T10:35:02Z","Action":"run","Package":"example.com/p","Test":"TestTotal"}
{"Time":"2026-11-29T10:35:02Z","Action":"output","Package":"example.com/p","Test":"TestTotal","Output":"=== RUN   TestTotal\n"}
`, KindNDJSON},
	{"ndjson: only the first 50 lines are parsed", strings.Repeat("{\"i\":1}\n", 50) + "{broken\n", KindNDJSON},
	{"ndjson broken in the sample: a json line remains", strings.Repeat("{\"i\":1}\n", 49) + "{broken\n", KindJSONLine},

	// 3. JSON-shaped.
	{"json-shaped truncated but bracketed", `{"items": [{"name": "a"}, {"name": }`, KindJSONShaped},
	{"json-shaped with comments", "{\n  // the port\n  \"port\": 8080\n}", KindJSONShaped},
	{"truncated without closing bracket", `{"items": [{"name": "a"}, {"name": "b"`, KindNone},
	{"bracketed log without key", "[INFO] started [\"x\"] done]", KindNone},

	// 4. YAML.
	{"yaml document marker", "---\napiVersion: v1\nkind: ConfigMap\ndata:\n  key: value\n", KindYAML},
	{"yaml document marker with comment", "--- # first\nname: x\n", KindYAML},
	{"yaml without marker", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n", KindYAML},
	{"yaml list items", "linters:\n- errcheck\n- govet\n", KindYAML},
	{"yaml compose with quoted items and comments", "services:\n  db:\n    image: neo4j:5\n    ports:\n      - \"7474:7474\"  # HTTP\n\n    environment:\n      NEO4J_AUTH: neo4j/secret\n      'quoted key': yes\n", KindYAML},
	{"yaml block scalar of foreign config", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vault-config\ndata:\n  config.hcl: |\n    ui = true\n    listener \"tcp\" {\n      tls_disable = 1\n      address = \"[::]:8200\"\n    }\n  other: x\n", KindYAML},
	{"yaml block scalar under a sequence item", "jobs:\n  lic:\n    steps:\n      - uses: actions/checkout@v4\n      - run: >-\n          docker run\n          -v $(pwd):/wrk -w /wrk\n          -check\n          .\n      - run: go test ./...\n", KindYAML},
	{"yaml block scalar indicators", "a: |2-\n    x y\nb: |-2\n    x y\nc: > # folded\n  x y\nd: >+\n  x y\n", KindYAML},
	{"yaml block scalar as a sequence item", "args:\n  - |\n    echo one && echo two\n  - plain\n", KindYAML},
	{"yaml block scalar under a quoted key", "data:\n  \"run me.sh\": |\n    #!/bin/sh\n    exec app --port 80\n", KindYAML},
	{"yaml block skip ends at dedent", "data:\n  script: |\n    echo hello\nthis is not yaml at all, just prose\n", KindNone},
	{"yaml piped value is not a block scalar", "steps:\n  cmd: sh -c \"a | b\"\n    echo hello\n", KindNone},
	{"flat key value lines are not yaml", "INFO: starting server\nWARN: cache miss\nERROR: connection refused\n", KindNone},
	{"single Error line", "Error: foo\n", KindNone},
	{"error with usage", "Error: unknown flag: --foo\nUsage:\n  app [flags]\n\nFlags:\n  -h, --help   help for app\n", KindNone},
	{"python traceback", "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    main()\nValueError: bad value\n", KindNone},
	{"python source", "import os\n\n\ndef main():\n    if os.environ:\n        return 1\n    else:\n        return 0\n", KindNone},
	{"python source of else/try only", "try:\n    x()\nexcept:\n    pass\n", KindNone},
	{"go source", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n", KindNone},
	{"git status", "On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\tmodified:   src/main.rs\n\tmodified:   src/lib.rs\n", KindNone},
	{"pytest output", "============================= test session starts ==============================\nplatform linux -- Python 3.11.4, pytest-7.2.0\ncollected 3 items\n\ntests/test_a.py .F.                                                      [100%]\n\n=================================== FAILURES ===================================\n___________________________________ test_x ____________________________________\n\n    def test_x():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/test_a.py:5: AssertionError\n=========================== short test summary info ============================\nFAILED tests/test_a.py::test_x - assert 1 == 2\n========================= 1 failed, 2 passed in 0.03s ==========================\n", KindNone},
	{"go test failure output starts with ---", "--- FAIL: TestFormat (0.00s)\n    money_test.go:15: Format(-250) = \"-2.-50\", want \"-2.50\"\nFAIL\nFAIL\texample.com/orders/internal/money\t0.004s\n", KindNone},
	{"diff -u header", "--- a.txt\t2026-01-01 10:00:00\n+++ b.txt\t2026-01-01 10:00:01\n@@ -1 +1 @@\n-a\n+b\n", KindNone},
	{"ruler first line", "----------\nresult: ok\n  detail: x\n", KindNone},
	{"cargo build log", "   Compiling serde v1.0.203\n   Compiling omni v0.6.1\nerror[E0308]: mismatched types\n  --> src/main.rs:3:5\n   |\n3  |     let x: i32 = \"s\";\n   |            ---   ^^^ expected i32\nerror: could not compile `omni` due to 1 previous error\n", KindNone},

	// 5. TSV, then CSV.
	{"tsv", "name\tstatus\tage\npod-a\tRunning\t1d\npod-b\tRunning\t2d\n", KindTSV},
	{"tsv needs three lines", "name\tstatus\npod-a\tRunning\n", KindNone},
	{"tsv uneven", "a\tb\tc\nd\te\nf\tg\th\n", KindNone},
	// The reference counts tabs only; go test's "ok  \tpkg\t0.005s" lines
	// are a TSV (delivered verbatim, a safe-side false positive).
	{"go test ok lines are tsv", "ok  \texample.com/a\t0.005s\nok  \texample.com/b\t0.003s\nok  \texample.com/c\t0.004s\n", KindTSV},
	{"csv", "name,status,age\npod-a,Running,1d\npod-b,Running,2d\n", KindCSV},
	// A known weak spot of the guard, kept on purpose: three lines of prose
	// with exactly one comma each are CSV. A false positive on the safe side.
	{"prose with one comma per line is csv", "First, we read the file.\nThen, we parse it.\nFinally, we print it.\n", KindCSV},
	{"prose with uneven commas", "First, we read the file.\nThen we parse it.\nFinally, we print it, twice.\n", KindNone},
	{"csv header with different count", "a,b,c\n1,2\n3,4,5\n", KindNone},

	// 6. Any JSON line.
	{"json line among prose", "curl says:\n{\"status\":\"healthy\"}\npod \"vmq\" deleted\n", KindJSONLine},
	{"bracketed log lines are not json", "[INFO] building [module-a]\n[WARN] slow [module-b]\n[INFO] done in 3s\n", KindNone},

	// 7. PEM.
	{"pem private key", "Here is the key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n", KindPEM},
	{"pem mentioned in prose", "the file starts with -----BEGIN CERTIFICATE----- as usual\nand ends.\n", KindNone},

	// 8. Base64.
	{"base64 wrapped at 76", sniffBase64Wrapped(), KindBase64},
	{"base64url token", "token:\neyJhbGciOiJIUzI1NiJ9_eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0-abc123XYZ\n", KindBase64},
	{"hex digest of 128 chars", strings.Repeat("0123456789abcdef", 8) + "\n", KindBase64},
	{"base64 one byte short", strings.Repeat("QUJD", 15) + "ZGV", KindNone},
	{"base64 at the threshold", strings.Repeat("QUJD", 15) + "ZGV4", KindBase64},
	{"base64 three padding chars", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5===", KindNone},
	{"ruler of dashes", strings.Repeat("-", 80) + "\nresult\n", KindNone},
	{"psql ruler", strings.Repeat("-", 30) + "+" + strings.Repeat("-", 40) + "\n", KindNone},
	{"long path without dots", "/home/dev/projects/example/src/main/java/com/example/service/impl/handler2\n", KindNone},
	{"long identifier", "test_that_the_parser_rejects_a_very_long_identifier_with_underscores_1\n", KindNone},
	{"letters only", strings.Repeat("abcdefghij", 7) + "\n", KindNone},

	// 9. Minified.
	{"minified line", "/*! app */\n" + strings.Repeat("var a=function(n){return n*2+1};", 40) + "\n", KindMinified},
	{"long prose line", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 30) + "\n", KindNone},
	{"wide ruler with title", strings.Repeat("=", 600) + " 3 passed in 0.10s " + strings.Repeat("=", 600) + "\n", KindNone},
	{"progress dots", strings.Repeat("....s..x..", 120) + "\n", KindNone},
	{"minified just under 1000 bytes", strings.Repeat("a=b(c);", 142) + "\n", KindNone},

	// Order: a JSON line beats PEM, PEM beats base64, base64 beats minified,
	// wherever the lines are.
	{"order: pem then json line", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n{\"a\":1}\n", KindJSONLine},
	{"order: base64 then pem", strings.Repeat("QUJD", 20) + "1\n-----BEGIN CERTIFICATE-----\n", KindPEM},
	{"order: minified then base64", strings.Repeat("var a=function(n){return n*2+1};", 40) + "\n" + strings.Repeat("QUJD", 20) + "1\n", KindBase64},

	// Tables are enumerations, handled elsewhere: not structured here.
	{"kubectl get pods", "NAME                               READY   STATUS             RESTARTS   AGE\napi-gateway-7fb96c846b-f4jnm       1/1     Running            0          5d\nauth-svc-5d4f6c8b99-abc12          0/1     CrashLoopBackOff   15         2h\n", KindNone},
}

func TestSniffTable(t *testing.T) {
	for _, c := range sniffCases {
		if got := Sniff(c.text); got != c.want {
			t.Errorf("%s: Sniff = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSniffScenarioPayloads checks the tool outputs of the scenarios that
// exercise the guard (copied from ../shared/scenarios into
// testdata/guard; see its README).
func TestSniffScenarioPayloads(t *testing.T) {
	for file, want := range map[string]Kind{
		"base64-one-line.txt":        KindBase64,   // base64-one-line-repeat
		"pem-chain.txt":              KindPEM,      // pem-and-minified-repeat, step 1
		"minified-bundle.txt":        KindMinified, // pem-and-minified-repeat, step 3
		"json-lines-among-prose.txt": KindJSONLine, // json-lines-among-prose
		"gh-api-jq-object.txt":       KindJSON,     // gh-api-jq-values, step 1
		"gh-api-jq-number.txt":       KindNone,     // gh-api-jq-values, step 2 ("104")
		"crlf-build-log.txt":         KindNone,     // crlf-lines-survive: must stay foldable
		"kubectl-pods.txt":           KindNone,     // kubectl-pods-35-rows-verbatim: an enumeration
		"docker-ps.txt":              KindNone,     // docker-ps-and-services-verbatim
		"kubectl-svc.txt":            KindNone,     // docker-ps-and-services-verbatim
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "guard", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := Sniff(string(data)); got != want {
			t.Errorf("%s: Sniff = %q, want %q", file, got, want)
		}
	}
	crlf, err := os.ReadFile(filepath.Join("testdata", "guard", "crlf-build-log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(crlf), "\r\n") {
		t.Errorf("crlf-build-log.txt lost its CRLF endings (check testdata/guard/.gitattributes)")
	}
}

// TestSniffSharedFixtures runs Sniff on the shared fixtures when they are
// present: every fixture whose meta.json says "structured" must be caught,
// and the plain command outputs must not be, except the few listed.
func TestSniffSharedFixtures(t *testing.T) {
	root := filepath.Join("..", "..", "shared", "fixtures")
	if _, err := os.Stat(root); err != nil {
		sharedtest.Skip(t, "../shared/fixtures")
	}
	// Plain outputs the structured rules classify anyway (tab-separated).
	alsoStructured := map[string]Kind{
		"real/du_node_modules/output.txt": KindTSV, // "16K\tnode_modules/x" lines
		"omni/go_test_pass.txt":           KindTSV, // "ok  \tpkg\t0.003s" lines
		"omni/az_vm_list.json":            KindJSON,
		"omni/grafana_dashboard.json":     KindJSON,
	}
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		isReal := strings.HasPrefix(rel, "real/") && strings.HasSuffix(rel, "/output.txt")
		isOmni := strings.HasPrefix(rel, "omni/") && rel != "omni/INDEX.md"
		if !isReal && !isOmni {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got := Sniff(string(data))
		seen++
		structured := false
		if isReal {
			meta, err := os.ReadFile(filepath.Join(filepath.Dir(path), "meta.json"))
			if err == nil {
				var m struct {
					Structured bool `json:"structured"`
				}
				_ = json.Unmarshal(meta, &m)
				structured = m.Structured
			}
		}
		switch want, listed := alsoStructured[rel]; {
		case listed && got != want:
			t.Errorf("%s: Sniff = %q, want %q", rel, got, want)
		case structured && got == KindNone:
			t.Errorf("%s: structured fixture not caught", rel)
		case !listed && !structured && got != KindNone:
			t.Errorf("%s: plain output classified %q", rel, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d fixture outputs checked", seen)
}

// TestSniffCorpusRates runs Sniff over every output of the shared corpus and
// logs how many outputs (and bytes) fall in each kind, with a few examples
// per kind, so that false positives can be judged. It fails only if Sniff
// panics.
func TestSniffCorpusRates(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpus")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/corpus")
	}
	type stat struct {
		outputs, bytes int
		examples       []string
	}
	stats := map[Kind]*stat{}
	total, totalBytes := 0, 0
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReaderSize(fh, 1<<20)
		for {
			line, rerr := r.ReadBytes('\n')
			if len(line) > 0 {
				var rec struct {
					Tool   string `json:"tool"`
					Input  string `json:"input"`
					Output string `json:"output"`
				}
				if json.Unmarshal(line, &rec) == nil {
					k := sniffNoPanic(t, rec.Output)
					s := stats[k]
					if s == nil {
						s = &stat{}
						stats[k] = s
					}
					s.outputs++
					s.bytes += len(rec.Output)
					total++
					totalBytes += len(rec.Output)
					if k != KindNone && len(s.examples) < 4 {
						s.examples = append(s.examples, fmt.Sprintf("%s %.60q: %.100q",
							rec.Tool, rec.Input, sniffWitness(rec.Output, k)))
					}
				}
			}
			if rerr != nil {
				if rerr != io.EOF {
					t.Fatalf("%s: %v", file, rerr)
				}
				break
			}
		}
		fh.Close()
	}
	kinds := make([]Kind, 0, len(stats))
	for k := range stats {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return stats[kinds[i]].outputs > stats[kinds[j]].outputs })
	t.Logf("%d outputs, %d bytes, %d files", total, totalBytes, len(files))
	for _, k := range kinds {
		s := stats[k]
		name := string(k)
		if k == KindNone {
			name = "(none)"
		}
		t.Logf("%-12s %6d outputs %6.2f%%  %9d bytes %6.2f%%", name, s.outputs,
			100*float64(s.outputs)/float64(total), s.bytes, 100*float64(s.bytes)/float64(max(totalBytes, 1)))
		for _, e := range s.examples {
			t.Logf("    e.g. %s", e)
		}
	}
}

// sniffNoPanic calls Sniff and fails the test with the input's size if it
// panics.
func sniffNoPanic(t *testing.T, text string) (k Kind) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Sniff panicked on a %d-byte output: %v", len(text), r)
		}
	}()
	return Sniff(text)
}

// sniffWitness is the line that decided an opaque or json-line kind, or the
// first non-blank line for the whole-text kinds, for the corpus log.
func sniffWitness(text string, k Kind) string {
	first := ""
	for rest := strings.TrimSpace(text); rest != ""; {
		var line string
		line, rest = sniffNextLine(rest)
		l := strings.TrimSpace(line)
		if l == "" {
			continue
		}
		if first == "" {
			first = line
		}
		switch {
		case k == KindJSONLine && sniffBracketed(l) && sniffJSONValue(l),
			k == KindPEM && sniffIsPEMArmour(l),
			k == KindBase64 && len(l) >= sniffMinBase64LineBytes && sniffIsBase64Line(l),
			k == KindMinified && len(l) >= sniffMinMinifiedLineBytes && sniffIsMinifiedLine(l):
			return l
		}
	}
	return first
}

func TestSniffAllocations(t *testing.T) {
	log := benchLog16K()
	if n := testing.AllocsPerRun(50, func() { _ = Sniff(log) }); n != 0 {
		t.Errorf("Sniff on a 16 KB log: %v allocations per call, want 0", n)
	}
}

func FuzzSniff(f *testing.F) {
	for _, c := range sniffCases {
		if len(c.text) < 100_000 {
			f.Add(c.text)
		}
	}
	f.Add(benchLog16K())
	f.Add("a: |\n  b\n c: d\n- e\n")
	f.Add("--- !tag\n")
	known := map[Kind]bool{KindNone: true, KindJSON: true, KindNDJSON: true, KindJSONShaped: true,
		KindYAML: true, KindTSV: true, KindCSV: true, KindJSONLine: true, KindPEM: true,
		KindBase64: true, KindMinified: true}
	f.Fuzz(func(t *testing.T, text string) {
		k := Sniff(text)
		if !known[k] {
			t.Fatalf("unknown kind %q", k)
		}
		if again := Sniff(text); again != k {
			t.Fatalf("not deterministic: %q then %q", k, again)
		}
		// Only the trimmed text counts.
		if padded := Sniff("\n \t" + text + "\r\n  "); padded != k {
			t.Fatalf("surrounding whitespace changed %q to %q", k, padded)
		}
		// CRLF line endings are whitespace at the end of each line.
		if crlf := Sniff(strings.ReplaceAll(text, "\n", "\r\n")); crlf != k {
			t.Fatalf("CRLF endings changed %q to %q", k, crlf)
		}
		if k == KindJSON {
			tt := strings.TrimSpace(text)
			if len(tt) <= sniffMaxJSONParseBytes && !json.Valid([]byte(tt)) {
				t.Fatalf("KindJSON for invalid JSON")
			}
		}
	})
}

// benchLog16K is a realistic 16 KB build-and-test log: compiler progress,
// warnings, test results, a failure with a stack trace and summary lines.
func benchLog16K() string {
	var b strings.Builder
	pieces := []string{
		"   Compiling serde v1.0.%d\n",
		"   Compiling tokio v1.38.%d (registry+https://github.com/rust-lang/crates.io-index)\n",
		"2026-11-29 10:41:17,%03d INFO    [ingestd] batch fetched 50 records from spool segment 0000\n",
		"2026-11-29 10:41:18,%03d DEBUG   [ingestd.db] upsert id=93c4fea47701 kind=signup user=1236\n",
		"warning: unused variable: `x%d`\n",
		"  --> src/lib.rs:%d:9\n",
		"   |\n",
		"test tests::parse_%d ... ok\n",
		"=== RUN   TestSplit/case_%d\n",
		"--- PASS: TestSplit/case_%d (0.00s)\n",
		"tests/test_api.py::test_endpoint_%d PASSED                             [ 42%%]\n",
		"npm http fetch GET 200 https://registry.npmjs.org/lodash %dms (cache hit)\n",
	}
	tail := "error[E0308]: mismatched types\n" +
		"    at Object.<anonymous> (src/app.test.js:3:9)\n" +
		"    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n" +
		"FAILED tests/test_api.py::test_endpoint_7 - AssertionError: expected 429 to equal 200\n" +
		"--- FAIL: TestSplit (0.00s)\n" +
		"test result: FAILED. 490 passed; 10 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.21s\n"
	for i := 0; b.Len() < 16*1024-len(tail); i++ {
		fmt.Fprintf(&b, pieces[i%len(pieces)], i)
	}
	b.WriteString(tail)
	return b.String()
}

func BenchmarkSniff(b *testing.B) {
	log := benchLog16K()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Sniff(log)
	}
}

// BenchmarkSniffJSON is the costliest common case: a 16 KB JSON document is
// parsed in full.
func BenchmarkSniffJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[\n")
	for i := 0; sb.Len() < 16*1024; i++ {
		fmt.Fprintf(&sb, "  {\"name\": \"vm-%d\", \"location\": \"eastus\", \"id\": %d, \"tags\": [\"a\", \"b\"]},\n", i, i)
	}
	sb.WriteString("  {}\n]\n")
	doc := sb.String()
	if Sniff(doc) != KindJSON {
		b.Fatal("not JSON")
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Sniff(doc)
	}
}

// TestCountLinesAgrees: CountLines is len(SplitLines) without the slice.
func TestCountLinesAgrees(t *testing.T) {
	for _, s := range []string{"", "a", "a\n", "a\nb", "a\nb\n", "\n", "\n\n", "x\r\ny\r\n", "no newline at all"} {
		if got, want := CountLines(s), len(SplitLines(nil, s)); got != want {
			t.Errorf("CountLines(%q) = %d, SplitLines gives %d", s, got, want)
		}
	}
}

func TestIsFailureLineAllocations(t *testing.T) {
	lines := strings.SplitAfter(benchLog16K(), "\n")
	n := testing.AllocsPerRun(20, func() {
		for _, l := range lines {
			_ = IsFailureLine(l)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per pass over a 16 KB log, want 0", n)
	}
}

func BenchmarkIsFailureLine(b *testing.B) {
	log := benchLog16K()
	lines := strings.SplitAfter(log, "\n")
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			_ = IsFailureLine(l)
		}
	}
}
