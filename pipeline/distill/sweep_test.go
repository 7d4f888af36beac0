package distill

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// Regressions found by the robustness sweep (testdata/fixtures/sweep.py):
// one test per class of input.

// run runs dd over in as a run of `args` (the program's arguments) that
// exited with exit.
func sweepRun(dd *Distiller, in string, exit int, args string) (string, bool) {
	out, _, ok := dd.Run(in, textline.SplitLines(nil, in), exit, strings.Fields(args))
	return out, ok
}

// A race report indents its frames with spaces: the standard library's
// testing frames go, the project's frames and every report line stay.
func TestGoTestRaceReportDropsStdFrames(t *testing.T) {
	in := "==================\nWARNING: DATA RACE\nRead at 0x00c000136168 by goroutine 8:\n" +
		"  example.com/ledger/racy.(*Counter).Inc()\n      /home/dev/src/ledgerfail/racy/racy.go:7 +0x9b\n\n" +
		"Goroutine 8 (running) created at:\n  example.com/ledger/racy.TestIncConcurrent()\n      /home/dev/src/ledgerfail/racy/racy_test.go:13 +0x84\n" +
		"  testing.tRunner()\n      /usr/local/go/src/testing/testing.go:2036 +0x21c\n" +
		"  testing.(*T).Run.gowrap1()\n      /usr/local/go/src/testing/testing.go:2101 +0x38\n==================\n" +
		"--- FAIL: TestIncConcurrent (0.01s)\n    racy_test.go:16: count 400\n    testing.go:1712: race detected during execution of test\n" +
		"FAIL\nFAIL\texample.com/ledger/racy\t0.292s\nFAIL\n"
	out, ok := sweepRun(dGoTest, in, 1, "test -race ./racy/")
	if !ok {
		t.Fatal("a failing race run was not recognised")
	}
	for _, gone := range []string{"testing.tRunner()", "/usr/local/go/src/testing/testing.go:2036"} {
		if strings.Contains(out, gone) {
			t.Errorf("kept %q:\n%s", gone, out)
		}
	}
	for _, want := range []string{"WARNING: DATA RACE", "racy.(*Counter).Inc()", "/home/dev/src/ledgerfail/racy/racy.go:7 +0x9b",
		"racy_test.go:13 +0x84", "race detected during execution of test", "FAIL\texample.com/ledger/racy\t0.292s"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost %q:\n%s", want, out)
		}
	}
}

// cargo run: the program's own output after cargo's "Running" line is
// never dropped, even when it reads like cargo's progress; with -q there
// is no line to tell them apart and the run is not claimed.
func TestCargoRunKeepsProgramOutput(t *testing.T) {
	in := "   Compiling tally-core v0.1.0 (/home/dev/src/tally/core)\n   Compiling tally-cli v0.1.0 (/home/dev/src/tally/cli)\n" +
		"    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.61s\n     Running `target/debug/tally-cli a b`\n" +
		"Compiling report for 2 words\nDownloading nothing: offline\nwords: 2\n"
	out, ok := sweepRun(dCargoBuild, in, 0, "run -p tally-cli -- a b")
	if !ok {
		t.Fatal("cargo run not recognised")
	}
	if strings.Contains(out, "Compiling tally-core") {
		t.Errorf("cargo's own progress kept:\n%s", out)
	}
	for _, want := range []string{"Compiling report for 2 words", "Downloading nothing: offline", "words: 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost the program's line %q:\n%s", want, out)
		}
	}
	q := "Compiling report for 2 words\nwords: 2\n"
	if out, ok := sweepRun(dCargoBuild, q, 0, "run -q -p tally-cli"); ok && out != q {
		t.Errorf("cargo run -q: the program's output was changed:\n%s", out)
	}
}

// git push/fetch: the transfer total is a count line and stays, with or
// without --progress; the counters go.
func TestGitRemoteKeepsTransferTotal(t *testing.T) {
	in := "Enumerating objects: 32, done.\nCounting objects: 100% (32/32), done.\nDelta compression using up to 2 threads\n" +
		"Compressing objects: 100% (2/2), done.\nWriting objects: 100% (32/32), 1.26 KiB | 17.00 KiB/s, done.\n" +
		"Total 32 (delta 0), reused 0 (delta 0), pack-reused 0\nremote: Total 5 (delta 1), reused 0 (delta 0)\nTo /tmp/s-proj/remote.git\n * [new branch]      main -> main\n"
	out, ok := sweepRun(dGitRemote, in, 0, "push origin main")
	if !ok {
		t.Fatal("git push not recognised")
	}
	for _, want := range []string{"Total 32 (delta 0), reused 0 (delta 0), pack-reused 0", "remote: Total 5 (delta 1)", " * [new branch]      main -> main"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Delta compression") {
		t.Errorf("kept a counter line:\n%s", out)
	}
}

// A backtrace frame without a location line is dropped only when it is the
// standard library's or the runtime's: a doctest's own main (rust_out::…)
// and a crate named rust_* are the project's code.
func TestCargoBacktraceKeepsProjectFramesNamedRust(t *testing.T) {
	in := "running 1 test\ntest core/src/lib.rs - lines (line 15) ... FAILED\n\nfailures:\n\n---- core/src/lib.rs - lines (line 15) stdout ----\n" +
		"thread 'main' (13113) panicked at core/src/lib.rs:5:1:\nassertion `left == right` failed\nstack backtrace:\n" +
		"   0: __rustc::rust_begin_unwind\n   1: core::panicking::panic_fmt\n   2: rust_out::main::_doctest_main_core_src_lib_rs_15_0\n" +
		"   3: rust_utils::parse::run\n   4: std::rt::lang_start\n\nfailures:\n    core/src/lib.rs - lines (line 15)\n\n" +
		"test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.37s\n\nerror: doctest failed, to rerun pass `-p tally-core --doc`\n"
	out, ok := sweepRun(dCargoTest, in, 101, "test")
	if !ok {
		t.Fatal("failing cargo test not recognised")
	}
	for _, want := range []string{"rust_out::main::_doctest_main_core_src_lib_rs_15_0", "rust_utils::parse::run"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost the project's frame %q:\n%s", want, out)
		}
	}
	for _, gone := range []string{"__rustc::rust_begin_unwind", "core::panicking::panic_fmt", "std::rt::lang_start"} {
		if strings.Contains(out, gone) {
			t.Errorf("kept the runtime's frame %q:\n%s", gone, out)
		}
	}
}

// The frames of a JS failure inside installed packages or Node's internals
// go; the project's frames and the error stay.
func TestJSDropsRunnerFrames(t *testing.T) {
	in := " FAIL  vt/edge.test.js > soft > leaks\nError: background job failed\n ❯ vt/edge.test.js:9:50\n" +
		" ❯ ../invoicejs/node_modules/@vitest/runner/dist/index.js:146:14\n ❯ runTest ../invoicejs/node_modules/@vitest/runner/dist/index.js:1056:17\n" +
		"\n Test Files  1 failed | 1 passed (2)\n      Tests  1 failed | 4 passed (5)\n"
	out, ok := sweepRun(dVitest, in, 1, "run")
	if !ok {
		t.Fatal("failing vitest run not recognised")
	}
	if strings.Contains(out, "node_modules") {
		t.Errorf("kept a runner frame:\n%s", out)
	}
	for _, want := range []string{"Error: background job failed", " ❯ vt/edge.test.js:9:50", "Tests  1 failed | 4 passed (5)"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost %q:\n%s", want, out)
		}
	}
	for _, s := range []string{"at Object.<anonymous> (jt/cart.test.js:19:23)", "❯ vt/wrap.test.js:17:67", "❯ vt/edge.test.js (6 tests | 3 failed) 117ms",
		"at settle (node_modules/axios/lib/core/settle.js:19:12)"} {
		if jsRunnerFrame(s) {
			t.Errorf("jsRunnerFrame(%q) = true", s)
		}
	}
	for _, s := range []string{"at Module._compile (node:internal/modules/cjs/loader:1554:14)", "at node:internal/main/run_main_module:28:49",
		"at Object.<anonymous> (node_modules/expect/build/index.js:10:3)"} {
		if !jsRunnerFrame(s) {
			t.Errorf("jsRunnerFrame(%q) = false", s)
		}
	}
}

// pytest --tb=native prints Python tracebacks in its reports: the File
// locations, their statements and the indented rest of the exception's
// message stay, as the E lines of the default format do.
func TestPytestNativeTracebackKeepsLocationAndMessage(t *testing.T) {
	in := "=================================== FAILURES ===================================\n" +
		"_____________________________ test_logs_and_fails ______________________________\n" +
		"Traceback (most recent call last):\n  File \"/home/dev/src/pybig/tests/test_big.py\", line 29, in test_logs_and_fails\n" +
		"    assert {\"a\": 1} == {\"a\": 2}\nAssertionError: assert {'a': 1} == {'a': 2}\n  Differing items:\n  {'a': 1} != {'a': 2}\n" +
		"----------------------------- Captured stdout call -----------------------------\nstdout line\n" +
		"=========================== short test summary info ============================\n" +
		"FAILED tests/test_big.py::test_logs_and_fails - AssertionError: assert {'a': 1} == {'a': 2}\n" +
		"============================== 1 failed in 0.13s ===============================\n"
	out, ok := sweepRun(dPytest, in, 1, "--tb=native tests")
	if !ok {
		t.Fatal("failing pytest run not recognised")
	}
	for _, want := range []string{"File \"/home/dev/src/pybig/tests/test_big.py\", line 29, in test_logs_and_fails",
		"    assert {\"a\": 1} == {\"a\": 2}", "  Differing items:", "  {'a': 1} != {'a': 2}", "1 failed in 0.13s"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost %q:\n%s", want, out)
		}
	}
}

// distillerGroup maps a distiller to the runners whose output it may read
// (a package script runs jest or vitest; git log -p prints diffs; make
// echoes the compiler).
func distillerGroup(d *Distiller) string {
	switch d {
	case nil:
		return ""
	case dCargoTest, dCargoBuild:
		return "cargo"
	case dGitLog, dGitDiff:
		return "git-log/diff"
	case dJest, dVitest, dJSTest, dBunTest, dMocha, dPlaywright:
		return "js"
	case dMake, dCompiler:
		return "make"
	}
	return d.Name()
}

// A distiller that does not understand its input returns nothing: over
// every real output of the train fixtures, no distiller of another group
// claims it and changes it (it would be shortening what it cannot read).
func TestDistillersClaimNoForeignOutput(t *testing.T) {
	metas, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", "train", "*", "meta.json"))
	if len(metas) == 0 {
		t.Fatal("no train fixtures")
	}
	all := []*Distiller{dGoTest, dCargoTest, dCargoBuild, dPytest, dUnittest, dSympy, dJest, dVitest, dMocha, dPlaywright,
		dBunTest, dJSTest, dDotnetTest, dDotnet, dMaven, dGradle, dRspec, dPhpunit, dMake, dCompiler, dDocker, dNpm, dPip,
		dApt, dTerraform, dGitStatus, dGitLog, dGitDiff, dGitRemote, dCurl, dWget}
	for _, m := range metas {
		var meta struct {
			Command  string `json:"command"`
			ExitCode int    `json:"exit_code"`
		}
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(m), "output.txt"))
		if err != nil {
			t.Fatal(err)
		}
		own := distillerGroup(Pick(Analyze(meta.Command)))
		lines := textline.SplitLines(nil, string(raw))
		for _, d := range all {
			if distillerGroup(d) == own {
				continue
			}
			for _, exit := range []int{0, meta.ExitCode} {
				if out, _, ok := d.Run(string(raw), lines, exit, nil); ok && out != string(raw) {
					t.Errorf("%s (%s): claimed and changed by %s (exit %d)", filepath.Base(filepath.Dir(m)), meta.Command, d.Name(), exit)
				}
			}
		}
	}
}

// git status -u/-uall/--untracked-files asks for the untracked paths:
// none is capped; a plain git status caps them with a counted marker.
func TestGitStatusUntrackedAskedAreAllKept(t *testing.T) {
	var b strings.Builder
	b.WriteString("On branch main\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n")
	for i := 0; i < 130; i++ {
		b.WriteString("\ttmp/u" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + ".log\n")
	}
	b.WriteString("\nnothing added to commit but untracked files present (use \"git add\" to track)\n")
	in := b.String()
	for _, args := range []string{"status -u", "status -uall", "status --untracked-files=all", "status -u ."} {
		out, ok := sweepRun(dGitStatus, in, 0, args)
		if !ok {
			t.Fatalf("git %s not recognised", args)
		}
		if strings.Contains(out, "more untracked paths not shown") || strings.Count(out, "\ttmp/") != 130 {
			t.Errorf("git %s: untracked paths were capped", args)
		}
	}
	if out, _ := sweepRun(dGitStatus, in, 0, "status"); !strings.Contains(out, "[OMNI: 30 more untracked paths not shown]") {
		t.Errorf("plain git status: no cap marker:\n%s", out)
	}
}

// python -m unittest -v asks for one line per test: the "... ok" lines
// stay, as pytest -v's PASSED lines do; without -v they go.
func TestUnittestVerboseKeepsOkLines(t *testing.T) {
	in := "test_a (tests.test_many.TestMany.test_a) ... ok\ntest_b (tests.test_many.TestMany.test_b) ... FAIL\n\n" +
		"======================================================================\nFAIL: test_b (tests.test_many.TestMany.test_b)\n" +
		"----------------------------------------------------------------------\nTraceback (most recent call last):\n" +
		"  File \"/x/tests/test_many.py\", line 5, in test_b\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2\n\n" +
		"----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n"
	for _, args := range []string{"-v tests.test_many", "--verbose", "test -v 2", "test --verbosity=2", "-vv"} {
		ci := Analyze("python3 -m unittest " + args)
		out, ok := sweepRun(dUnittest, in, 1, strings.Join(ci.Args, " "))
		if !ok || !strings.Contains(out, "test_a (tests.test_many.TestMany.test_a) ... ok") {
			t.Errorf("unittest %s: the ok line was dropped (ok=%v):\n%s", args, ok, out)
		}
	}
	for _, args := range []string{"tests.test_many", "test -v 1", "test --verbosity=1"} {
		ci := Analyze("python3 -m unittest " + args)
		out, ok := sweepRun(dUnittest, in, 1, strings.Join(ci.Args, " "))
		if !ok || strings.Contains(out, "test_a (tests.test_many.TestMany.test_a) ... ok") {
			t.Errorf("unittest %s: the ok line stayed (ok=%v):\n%s", args, ok, out)
		}
	}
}
