package distill_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline"
)

// Cases found by running the real tools on small projects
// (testdata/fixtures/train): each asserts one rule that generalises.

func TestGoTestKeepsNoTestFilesTally(t *testing.T) {
	in := "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/shop/cart\t0.035s\n?   \texample.com/shop/util\t[no test files]\n" +
		strings.Repeat("=== RUN   TestB\n--- PASS: TestB (0.00s)\n", 8)
	res := pipeline.Shorten(pipeline.ShortenRequest{Command: "go test -v ./...", Text: in})
	if !strings.Contains(res.Text, "?   \texample.com/shop/util\t[no test files]\n") {
		t.Fatalf("the [no test files] tally line was dropped:\n%s", res.Text)
	}
}

func TestCargoTestNamedKeepsPassLines(t *testing.T) {
	in := "   Compiling spans v0.1.0 (/home/dev/src/spans)\n    Finished `test` profile\n     Running unittests src/lib.rs (target/debug/deps/spans-1)\n\nrunning 2 tests\n" +
		"test tests::parse_ok ... ok\ntest tests::parse_bad ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 12 filtered out; finished in 0.00s\n\n"
	named := pipeline.Shorten(pipeline.ShortenRequest{Command: "cargo test parse", Text: in})
	if !strings.Contains(named.Text, "test tests::parse_ok ... ok") {
		t.Fatalf("a named test's pass line was dropped:\n%s", named.Text)
	}
	all := pipeline.Shorten(pipeline.ShortenRequest{Command: "cargo test", Text: in})
	if strings.Contains(all.Text, "test tests::parse_ok ... ok") {
		t.Fatalf("pass lines kept without a filter:\n%s", all.Text)
	}
}

func TestJestDropsCodeFramesKeepsLocation(t *testing.T) {
	in := "FAIL jest/cart.test.js\n  ● Cart › merges\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 35\n    Received: 30\n\n" +
		"      17 |     c.add('bolt', 1, 15);\n      18 |     c.add('bolt', 1, 20);\n    > 19 |     expect(c.total()).toBe(35);\n         |                       ^\n      20 |   });\n\n" +
		"      at Object.toBe (jest/cart.test.js:19:23)\n\nTest Suites: 1 failed, 1 total\nTests:       1 failed, 3 passed, 4 total\nSnapshots:   0 total\nTime:        0.5 s\nRan all test suites.\n"
	res := pipeline.Shorten(pipeline.ShortenRequest{Command: "npx jest", Text: in, ExitCode: 1})
	if strings.Contains(res.Text, "> 19 |") {
		t.Fatalf("code frame kept:\n%s", res.Text)
	}
	for _, want := range []string{"Expected: 35", "Received: 30", "at Object.toBe (jest/cart.test.js:19:23)", "Tests:       1 failed, 3 passed, 4 total"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("lost %q:\n%s", want, res.Text)
		}
	}
}

func TestGitCloneProgressReadsAsFinalStates(t *testing.T) {
	in := "Cloning into 'x'...\nremote: Counting objects:   0% (1/90)   \rremote: Counting objects:  50% (45/90)   \rremote: Counting objects: 100% (90/90), done.   \n" +
		"Receiving objects:   1% (1/90)\rReceiving objects: 50% (45/90)\rremote: Total 90 (delta 7), reused 0 (delta 0), pack-reused 0   \n" +
		"Receiving objects: 100% (90/90), 1.73 MiB | 12.19 MiB/s, done.\nResolving deltas:   0% (0/7)\rResolving deltas: 100% (7/7)\rResolving deltas: 100% (7/7), done.\n"
	res := pipeline.Shorten(pipeline.ShortenRequest{Command: "git clone --progress file:///r x", Text: in})
	for _, want := range []string{"Cloning into 'x'...", "\nremote: Counting objects: 100% (90/90), done.", "\nremote: Total 90 (delta 7)", "\nResolving deltas: 100% (7/7), done.\n"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("lost %q:\n%q", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "50%") {
		t.Fatalf("a redraw survived:\n%q", res.Text)
	}
}

func TestPytestKeepsCollectionErrorProse(t *testing.T) {
	in := "============================= test session starts ==============================\nplatform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0\nrootdir: /home/dev/src/shelf\ncollected 19 items / 1 error\n\n" +
		"==================================== ERRORS ====================================\n____________________ ERROR collecting tests/test_restock.py ____________________\n" +
		"ImportError while importing test module '/home/dev/src/shelf/tests/test_restock.py'.\nHint: make sure your test modules/packages have valid Python names.\nTraceback:\n" +
		"/usr/lib/python3.11/importlib/__init__.py:126: in import_module\n    return _bootstrap._gcd_import(name[level:], package, level)\n" +
		"E   ImportError: cannot import name 'restock' from 'shelf.stock'\n=========================== short test summary info ============================\nERROR tests/test_restock.py\n" +
		"!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n=============================== 1 error in 1.14s ===============================\n"
	res := pipeline.Shorten(pipeline.ShortenRequest{Command: "pytest", Text: in, ExitCode: 2})
	if !strings.Contains(res.Text, "ImportError while importing test module") {
		t.Fatalf("collection error statement dropped:\n%s", res.Text)
	}
}

func TestMakeFoldsRepeatedWarningsNeverErrors(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, "cc -Wall -c src/l%d.c -o src/l%d.o\nsrc/l%d.c: In function ‘f%d’:\nsrc/l%d.c:6:9: warning: unused variable ‘u%d’ [-Wunused-variable]\n    6 |     int u%d;\n      |         ^~\n", i, i, i, i, i, i, i)
	}
	b.WriteString("cc -Wall -c src/bad.c -o src/bad.o\nsrc/bad.c:4:16: error: ‘struct point’ has no member named ‘z’\n    4 |     return p.x * p.z;\n      |                ^\n" +
		"make: *** [Makefile:10: src/bad.o] Error 1\n")
	res := pipeline.Shorten(pipeline.ShortenRequest{Command: "make", Text: b.String(), ExitCode: 2})
	for _, want := range []string{"src/l0.c:6:9: warning: unused variable ‘u0’ [-Wunused-variable]", "[4 more -Wunused-variable diagnostics folded]",
		"src/bad.c:4:16: error: ‘struct point’ has no member named ‘z’", "make: *** [Makefile:10: src/bad.o] Error 1"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("lost %q:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "u3") || strings.Contains(res.Text, "In function ‘f3’") {
		t.Fatalf("a repeated warning or its context survived:\n%s", res.Text)
	}
}

// TestDistillOwnTrainFixtures runs Shorten over the module's testdata/fixtures/train (real
// outputs of the tools run here on small projects, make.py) and asserts what
// check.py asserts: every must_keep line, every must_keep_regex, no
// contradicted fact, structured cases byte-identical; and the goldens under
// testdata/train/<case>/golden.txt (-update rewrites them). testdata/fixtures/
// heldout is deliberately not read here: it is measured once, at the end of a
// change, with check.py.
func TestDistillOwnTrainFixtures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", "train", "*", "meta.json"))
	if len(dirs) == 0 {
		t.Fatal("no train fixtures under ../../testdata/fixtures/train")
	}
	sort.Strings(dirs)
	tin, tout := 0, 0
	for _, m := range dirs {
		var meta dgMeta
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(m), "output.txt"))
		if err != nil {
			t.Fatal(err)
		}
		res := pipeline.Shorten(pipeline.ShortenRequest{Command: meta.Command, Text: string(raw), ExitCode: meta.ExitCode})
		for _, v := range dgViolations(meta, string(raw), res.Text) {
			t.Errorf("%s: %s", filepath.Base(filepath.Dir(m)), v)
		}
		dgGoldenCheck(t, filepath.Join(dgGolden, "train", filepath.Base(filepath.Dir(m)), "golden.txt"), string(raw), res.Text)
		tin += len(raw)
		tout += len(res.Text)
	}
	t.Logf("%d train cases, bytes %d -> %d (saved %.1f%%)", len(dirs), tin, tout, 100*(1-float64(tout)/float64(tin)))
}

// A recognised run that asked for verbose output keeps its per-test lines:
// the collapse fallback does not fold what the distiller kept.
func TestVerboseRunKeepsPerTestLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("============================= test session starts ==============================\nplatform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0\ncachedir: .pytest_cache\nrootdir: /home/dev/src/shelf\ncollecting ... collected 42 items\n\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "tests/test_params.py::test_square[%d] PASSED %s [%3d%%]\n", i, strings.Repeat(" ", 20), i*2)
	}
	b.WriteString("tests/test_low.py::test_low_basic PASSED                                 [ 97%]\ntests/test_low.py::test_low_empty PASSED                                 [100%]\n\n============================== 42 passed in 0.31s ==============================\n")
	res := pipeline.Shorten(pipeline.ShortenRequest{Command: "pytest -v tests/test_params.py tests/test_low.py", Text: b.String()})
	for _, want := range []string{"tests/test_low.py::test_low_basic PASSED", "tests/test_params.py::test_square[17] PASSED", "42 passed in 0.31s"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("lost %q:\n%s", want, res.Text)
		}
	}
}
