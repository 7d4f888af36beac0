package distill_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/omnictx/omni/pipeline"
)

// The tests in package distill_test run the distillers as every door
// does, through pipeline.Shorten (the command's distiller, collapse, the
// final cut), over cases written here (shorten_*_test.go), the goldens
// under testdata/<suite>/<case>/golden.txt (testdata/README.md) and the
// shared fixtures beside the checkout.

// shCheck fails t when res breaks an invariant of every Shorten result
// (pipeline.CheckShortened).
func shCheck(t testing.TB, req pipeline.ShortenRequest, res pipeline.ShortenResult) {
	t.Helper()
	if err := pipeline.CheckShortened(req, res); err != nil {
		t.Fatal(err)
	}
}

// dtCase is one distiller case: input, what must stay, what must go.
type dtCase struct {
	name, cmd string
	exit      int
	in        string
	distiller string
	keep      []string
	gone      []string
	raw       bool // the distiller must not be used (raw, or the collapse fallback)
}

func (c dtCase) run(t *testing.T) {
	t.Helper()
	req := pipeline.ShortenRequest{Command: c.cmd, Text: c.in, ExitCode: c.exit}
	r := pipeline.Shorten(req)
	shCheck(t, req, r)
	if c.raw {
		if r.Reason == "" && !r.Collapsed {
			t.Errorf("%s: the distiller's result was used: %q", c.name, r.Text)
		}
		return
	}
	if r.Distiller != c.distiller || r.Reason != "" || !r.Changed {
		t.Errorf("%s: distiller=%q reason=%q changed=%v", c.name, r.Distiller, r.Reason, r.Changed)
	}
	for _, k := range c.keep {
		if !strings.Contains(r.Text, k) {
			t.Errorf("%s: lost %q in\n%s", c.name, k, r.Text)
		}
	}
	for _, g := range c.gone {
		if strings.Contains(r.Text, g) {
			t.Errorf("%s: kept %q in\n%s", c.name, g, r.Text)
		}
	}
}

func dtRepeat(format string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

func TestDistillerFamilies(t *testing.T) {
	cases := []dtCase{
		{name: "dotnet test failures", cmd: "dotnet test 2>&1 | tee test.log", exit: 1,
			in: "  Determining projects to restore...\n  All projects are up-to-date for restore.\n  Billing -> /p/bin/Debug/net8.0/Billing.dll\n" +
				"Starting test execution, please wait...\nA total of 1 test files matched the specified pattern.\n" +
				dtRepeat("  Passed Billing.Tests.T.case_%03d [3 ms]\n", 60) +
				"  Failed Billing.Tests.T.Rounding_case_4 [11 ms]\n  Error Message:\n   Assert.Equal() Failure: Expected 3 Actual 4 (case 4)\n  Stack Trace:\n     at Billing.Tests.T.Rounding_case_4() in /p/T.cs:line 107\n" +
				"\nFailed!  - Failed:     1, Passed:    60, Skipped:     0, Total:    61, Duration: 2 s - Billing.Tests.dll (net8.0)\n",
			distiller: "dotnet-test",
			keep:      []string{"Failed Billing.Tests.T.Rounding_case_4", "Assert.Equal() Failure: Expected 3 Actual 4 (case 4)", "/p/T.cs:line 107", "Failed!  - Failed:     1, Passed:    60"},
			gone:      []string{"Passed Billing.Tests.T.case_001", "Determining projects"}},
		{name: "maven test", cmd: "mvn -q test", exit: 1,
			in: dtRepeat("[INFO] Downloading from central: https://repo/x%d.jar\n", 30) + "[INFO] Running com.x.AppTest\n" +
				"[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE! - in com.x.AppTest\n" +
				"[ERROR] com.x.AppTest.testAdd  Time elapsed: 0.01 s  <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <3> but was: <4>\n" +
				"[INFO] \n[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0\n[INFO] BUILD FAILURE\n[INFO] Total time:  2.1 s\n",
			distiller: "maven",
			keep:      []string{"<<< FAILURE!", "expected: <3> but was: <4>", "[INFO] BUILD FAILURE", "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0\n"},
			gone:      []string{"Downloading from"}},
		{name: "gradle build", cmd: "./gradlew build", exit: 0,
			in:        dtRepeat("> Task :app:task%d UP-TO-DATE\n", 30) + "\nBUILD SUCCESSFUL in 3s\n30 actionable tasks: 2 executed, 28 up-to-date\n",
			distiller: "gradle", keep: []string{"BUILD SUCCESSFUL in 3s", "30 actionable tasks"}, gone: []string{"> Task :app:task1 "}},
		{name: "rspec", cmd: "bundle exec rspec", exit: 1,
			in:        strings.Repeat(".", 70) + "F\n" + strings.Repeat(".", 71) + "\n\nFailures:\n\n  1) User validates email\n     Failure/Error: expect(user).to be_valid\n       expected valid\n     # ./spec/user_spec.rb:12:in `block (2 levels)'\n\nFinished in 0.5 seconds\n142 examples, 1 failure\n\nFailed examples:\n\nrspec ./spec/user_spec.rb:10 # User validates email\n",
			distiller: "rspec", keep: []string{"Failure/Error: expect(user).to be_valid", "./spec/user_spec.rb:12", "142 examples, 1 failure", "rspec ./spec/user_spec.rb:10"}, gone: []string{"......"}},
		{name: "phpunit", cmd: "vendor/bin/phpunit", exit: 0,
			in:        "PHPUnit 10.5.0 by Sebastian Bergmann and contributors.\n\nRuntime:       PHP 8.3.0\n\n" + strings.Repeat("...............................................................  63 / 126 ( 50%)\n", 2) + "\nTime: 00:00.120, Memory: 10.00 MB\n\nOK (126 tests, 300 assertions)\n",
			distiller: "phpunit", keep: []string{"OK (126 tests, 300 assertions)"}, gone: []string{"63 / 126"}},
		{name: "mocha", cmd: "npx mocha", exit: 1,
			in:        "  Array\n" + dtRepeat("    ✓ works %d\n", 20) + "    1) fails on empty\n\n  20 passing (12ms)\n  1 failing\n\n  1) Array\n       fails on empty:\n     AssertionError: expected 0 to equal 1\n      at Context.<anonymous> (test/a.js:9:10)\n",
			distiller: "mocha", keep: []string{"20 passing (12ms)", "1 failing", "AssertionError: expected 0 to equal 1", "test/a.js:9:10"}, gone: []string{"✓ works 3"}},
		{name: "bun test", cmd: "bun test", exit: 1,
			in:        "src/a.test.ts:\n" + dtRepeat("✓ case %d [0.10ms]\n", 15) + "✗ login > rejects [0.2ms]\n  error: expect(received).toBe(expected)\n\n 15 pass\n 1 fail\nRan 16 tests across 2 files. [40.00ms]\n",
			distiller: "bun-test", keep: []string{"✗ login > rejects", "error: expect(received).toBe(expected)", " 1 fail", "Ran 16 tests across 2 files."}, gone: []string{"✓ case 3"}},
		{name: "npm test via vitest", cmd: "npm test", exit: 0,
			in:        "\n> app@1.0.0 test\n> vitest run\n\n" + dtRepeat(" ✓ src/f%d.test.ts (3 tests) 2ms\n", 3) + "   ✓ inner test one 1ms\n   ✓ inner test two 1ms\n   ✓ inner test three 1ms\n   ✓ inner test four 1ms\n\n Test Files  3 passed (3)\n      Tests  9 passed (9)\n   Start at  10:00:00\n   Duration  1.2s\n",
			distiller: "js-test", keep: []string{" ✓ src/f1.test.ts (3 tests) 2ms", "Tests  9 passed (9)"}, gone: []string{"inner test"}},
		{name: "pip install", cmd: "pip install -r requirements.txt", exit: 0,
			in:        dtRepeat("Collecting pkg%d\n  Downloading pkg-1.0-py3-none-any.whl (10 kB)\n", 20) + "Installing collected packages: pkg0, pkg1\nSuccessfully installed pkg0-1.0 pkg1-1.0\n",
			distiller: "pip-install", keep: []string{"Successfully installed pkg0-1.0 pkg1-1.0", "Installing collected packages"}, gone: []string{"Collecting pkg3"}},
		{name: "apt install", cmd: "sudo apt-get install -y curl", exit: 0,
			in:        "Reading package lists...\nBuilding dependency tree...\nThe following NEW packages will be installed:\n  curl libcurl4\n0 upgraded, 2 newly installed, 0 to remove and 5 not upgraded.\n" + dtRepeat("Get:%d http://deb.debian.org/debian bookworm/main amd64 x [100 kB]\n", 10) + "Unpacking curl ...\nSetting up curl (7.88) ...\nProcessing triggers for man-db ...\n",
			distiller: "apt", keep: []string{"0 upgraded, 2 newly installed, 0 to remove and 5 not upgraded.", "curl libcurl4"}, gone: []string{"Get:3 "}},
		{name: "terraform apply", cmd: "terraform apply -auto-approve", exit: 0,
			in:        "aws_s3_bucket.b: Refreshing state... [id=b]\n" + dtRepeat("aws_instance.web: Still creating... [%d0s elapsed]\n", 12) + "aws_instance.web: Creation complete after 2m1s [id=i-0abc]\n\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\n",
			distiller: "terraform", keep: []string{"Creation complete after 2m1s [id=i-0abc]", "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."}, gone: []string{"Still creating"}},
		{name: "git push", cmd: "git push origin main", exit: 0,
			in:        "Enumerating objects: 15, done.\nCounting objects: 100% (15/15), done.\nDelta compression using up to 8 threads\nCompressing objects: 100% (8/8), done.\nWriting objects: 100% (8/8), 1.2 KiB | 1.2 MiB/s, done.\nTotal 8 (delta 6), reused 0 (delta 0), pack-reused 0\nremote: Resolving deltas: 100% (6/6), completed with 6 local objects.\nTo github.com:o/r.git\n   abc1234..def5678  main -> main\n",
			distiller: "git-remote", keep: []string{"To github.com:o/r.git", "abc1234..def5678  main -> main"}, gone: []string{"Counting objects"}},
		{name: "docker buildkit", cmd: "docker build -t app .", exit: 0,
			in:        "#0 building with \"default\" instance using docker driver\n\n#1 [internal] load build definition from Dockerfile\n#1 transferring dockerfile: 200B done\n#1 DONE 0.0s\n\n#2 [internal] load metadata for docker.io/library/node:20\n#2 DONE 1.0s\n\n#3 [1/3] FROM docker.io/library/node:20@sha256:abc\n#3 resolve docker.io/library/node:20@sha256:abc done\n#3 sha256:1111 1.2MB / 3.4MB 0.5s\n#3 extracting sha256:1111 done\n#3 DONE 3.0s\n\n#4 [2/3] RUN npm ci\n#4 2.345 added 10 packages in 2s\n#4 DONE 3.1s\n\n#5 exporting to image\n#5 exporting layers 0.2s done\n#5 writing image sha256:feed done\n#5 naming to docker.io/library/app done\n#5 DONE 0.3s\n",
			distiller: "docker-build", keep: []string{"#4 [2/3] RUN npm ci", "#4 2.345 added 10 packages in 2s", "#5 naming to docker.io/library/app done"}, gone: []string{"#3 sha256:1111", "#1 DONE 0.0s"}},
		// unittest -v asked for its ok lines: nothing left to cut, the raw
		// output passes.
		{name: "unittest verbose", cmd: "python -m unittest -v", exit: 1,
			in: dtRepeat("test_ok_%d (tests.test_x.T.test_ok) ... ok\n", 30) + "test_bad (tests.test_x.T.test_bad) ... FAIL\n\n======================================================================\nFAIL: test_bad (tests.test_x.T.test_bad)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/p/tests/test_x.py\", line 9, in test_bad\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2\n\n----------------------------------------------------------------------\nRan 31 tests in 0.01s\n\nFAILED (failures=1)\n", raw: true},
		// Django's runner at verbosity 1 prints ok lines too (a test that
		// prints): they were not asked for and go.
		{name: "unittest ok lines not asked for", cmd: "python manage.py test", exit: 1,
			in:        dtRepeat("test_ok_%d (tests.test_x.T.test_ok) ... ok\n", 30) + "test_bad (tests.test_x.T.test_bad) ... FAIL\n\n======================================================================\nFAIL: test_bad (tests.test_x.T.test_bad)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/p/tests/test_x.py\", line 9, in test_bad\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2\n\n----------------------------------------------------------------------\nRan 31 tests in 0.01s\n\nFAILED (failures=1)\n",
			distiller: "unittest", keep: []string{"test_bad (tests.test_x.T.test_bad) ... FAIL", "AssertionError: 1 != 2", "FAILED (failures=1)"}, gone: []string{"test_ok_3 "}},
		{name: "cmake make", cmd: "cmake --build build", exit: 0,
			in:        dtRepeat("[ %d%%] Building C object CMakeFiles/app.dir/src/f.c.o\n", 30) + "[100%] Linking C executable app\n[100%] Built target app\n",
			distiller: "make", keep: []string{"[100%] Built target app"}, gone: []string{"Building C object"}},
		{name: "cargo build large", cmd: "cargo build --release", exit: 0,
			in:        dtRepeat("   Compiling crate%d v0.1.0\n", 40) + "    Finished `release` profile [optimized] target(s) in 9.1s\n",
			distiller: "cargo-build", keep: []string{"Finished `release` profile"}, gone: []string{"Compiling crate1 "}},
		{name: "wget", cmd: "wget https://x/file.tgz", exit: 0,
			in:        "--2026-01-01 10:00:00--  https://x/file.tgz\nResolving x (x)... 1.2.3.4\nConnecting to x (x)|1.2.3.4|:443... connected.\nHTTP request sent, awaiting response... 200 OK\nLength: 1048576 (1.0M) [application/gzip]\nSaving to: 'file.tgz'\n\n" + dtRepeat("  %d0K .......... .......... .......... .......... .......... 10%% 1M 1s\n", 20) + "\n2026-01-01 10:00:01 (1 MB/s) - 'file.tgz' saved [1048576/1048576]\n",
			distiller: "wget", keep: []string{"HTTP request sent, awaiting response... 200 OK", "'file.tgz' saved [1048576/1048576]"}, gone: []string{".........."}},
		{name: "sympy", cmd: "bin/test sympy/sets", exit: 0,
			in:        "============================= test process starts ==============================\nexecutable:         /usr/bin/python  (3.9.20-final-0) [CPython]\narchitecture:       64-bit\ncache:              yes\nground types:       python \nnumpy:              None\nrandom seed:        91681508\nhash randomization: on (PYTHONHASHSEED=3940196654)\n\nsympy/sets/tests/test_sets.py[99] .........................................f....\n.......f......f.............................f........                       [OK]\n\n======== tests finished: 95 passed, 4 expected to fail, in 2.87 seconds ========\n",
			distiller: "sympy-test", keep: []string{"tests finished: 95 passed, 4 expected to fail"}, gone: []string{"random seed:"}},
		// Not recognised: passes raw.
		{name: "go test without verdict", cmd: "go test ./...", exit: 0, in: dtRepeat("=== RUN   TestX%d\n", 30), raw: true},
		{name: "failing pytest without tally", cmd: "pytest", exit: 2, in: dtRepeat("tests/test_%d.py ....\n", 30) + "Traceback (most recent call last):\n  File x\nKeyboardInterrupt\n", raw: true},
		{name: "git diff exit 128", cmd: "git diff HEAD~999", exit: 128, in: "fatal: bad revision 'HEAD~999'\n" + dtRepeat("line %d padding padding\n", 20), raw: true},
	}
	for _, c := range cases {
		c.run(t)
	}
}

// TestScenarioShapes runs the shared hook scenarios whose subject is the
// first-seen pipeline (distillation, chains, failures, enumerations,
// structured payloads) through Shorten and checks their visible_contains,
// byte_identical and failure-line properties.
func TestScenarioShapes(t *testing.T) {
	dir := "../../../shared/scenarios"
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/scenarios")
	}
	for _, id := range []string{"chain-cd-log-semicolon-ls", "chain-git-status-and-find", "docker-ps-and-services-verbatim",
		"kubectl-pods-35-rows-verbatim", "hidden-exit-keeps-first-failure", "dotnet-failures-not-duplicated",
		"green-cargo-multi-target", "json-lines-among-prose", "gh-api-jq-values", "small-listings-never-grow",
		"tiny-output-untouched", "crlf-lines-survive", "stderr-only-output-survives", "read-large-log-keeps-fatal-tail",
		"base64-one-line-repeat", "pem-and-minified-repeat"} {
		b, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		sc := scParse(t, b)
		for i, st := range sc.steps {
			if st.text == "" && st.tool == "" {
				continue
			}
			req := pipeline.ShortenRequest{Command: st.command, Tool: st.tool, Text: st.text}
			res := pipeline.Shorten(req)
			shCheck(t, req, res)
			for _, c := range sc.checks {
				if c.step != i+1 {
					continue
				}
				if c.byteIdentical && res.Text != st.text {
					t.Errorf("%s step %d: must be byte-identical, got %q", id, i+1, dgCut(res.Text, 300))
				}
				for _, s := range c.contains {
					if !strings.Contains(res.Text, s) {
						t.Errorf("%s step %d: missing %q", id, i+1, s)
					}
				}
				for _, s := range c.occurrencesLE {
					if strings.Count(res.Text, s) > strings.Count(st.text, s) {
						t.Errorf("%s step %d: %q more often than raw", id, i+1, s)
					}
				}
				for word, want := range c.facts {
					for _, n := range dgPairs(res.Text, word) {
						if n != want {
							t.Errorf("%s step %d: says %d %s, want %d", id, i+1, n, word, want)
						}
					}
				}
			}
		}
	}
}
