package pipeline

import (
	"strings"
	"testing"
)

// Cases found by running the real tools on small projects
// (testdata/fixtures/train): each asserts one rule that generalises.

func TestGoTestKeepsNoTestFilesTally(t *testing.T) {
	in := "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/shop/cart\t0.035s\n?   \texample.com/shop/util\t[no test files]\n" +
		strings.Repeat("=== RUN   TestB\n--- PASS: TestB (0.00s)\n", 8)
	res := Shorten(ShortenRequest{Command: "go test -v ./...", Text: in})
	if !strings.Contains(res.Text, "?   \texample.com/shop/util\t[no test files]\n") {
		t.Fatalf("the [no test files] tally line was dropped:\n%s", res.Text)
	}
}

func TestCargoTestFilter(t *testing.T) {
	cases := map[string]bool{
		"test":                    false,
		"test parse":              true,
		"test -p spans parse":     true,
		"test -p spans":           false,
		"test -- --nocapture":     false,
		"test --release merge_":   true,
		"nextest run":             false,
		"nextest run tests::pars": true,
	}
	for args, want := range cases {
		if got := cargoTestFilter(strings.Fields(args)); got != want {
			t.Errorf("cargoTestFilter(%q) = %v, want %v", args, got, want)
		}
	}
}

func TestCargoTestNamedKeepsPassLines(t *testing.T) {
	in := "   Compiling spans v0.1.0 (/home/dev/src/spans)\n    Finished `test` profile\n     Running unittests src/lib.rs (target/debug/deps/spans-1)\n\nrunning 2 tests\n" +
		"test tests::parse_ok ... ok\ntest tests::parse_bad ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 12 filtered out; finished in 0.00s\n\n"
	named := Shorten(ShortenRequest{Command: "cargo test parse", Text: in})
	if !strings.Contains(named.Text, "test tests::parse_ok ... ok") {
		t.Fatalf("a named test's pass line was dropped:\n%s", named.Text)
	}
	all := Shorten(ShortenRequest{Command: "cargo test", Text: in})
	if strings.Contains(all.Text, "test tests::parse_ok ... ok") {
		t.Fatalf("pass lines kept without a filter:\n%s", all.Text)
	}
}

func TestJSFrameLine(t *testing.T) {
	yes := []string{"      17 |     c.add('bolt', 1, 15);", "    > 19 |     expect(c.total()).toBe(35);", "         |                       ^",
		"     15|   it('short text', () => {", "       |      ^", "      48|"}
	no := []string{"    Expected: 35", "      at Object.toBe (jest/cart.test.js:19:23)", " ❯ vt/wrap.test.js:17:67", "| a | b |", "2 | 3"}
	for _, s := range yes {
		if !jsFrameLine(s) {
			t.Errorf("jsFrameLine(%q) = false", s)
		}
	}
	for _, s := range no[:4] {
		if jsFrameLine(s) {
			t.Errorf("jsFrameLine(%q) = true", s)
		}
	}
}

func TestJestDropsCodeFramesKeepsLocation(t *testing.T) {
	in := "FAIL jest/cart.test.js\n  ● Cart › merges\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 35\n    Received: 30\n\n" +
		"      17 |     c.add('bolt', 1, 15);\n      18 |     c.add('bolt', 1, 20);\n    > 19 |     expect(c.total()).toBe(35);\n         |                       ^\n      20 |   });\n\n" +
		"      at Object.toBe (jest/cart.test.js:19:23)\n\nTest Suites: 1 failed, 1 total\nTests:       1 failed, 3 passed, 4 total\nSnapshots:   0 total\nTime:        0.5 s\nRan all test suites.\n"
	res := Shorten(ShortenRequest{Command: "npx jest", Text: in, ExitCode: 1})
	if strings.Contains(res.Text, "> 19 |") {
		t.Fatalf("code frame kept:\n%s", res.Text)
	}
	for _, want := range []string{"Expected: 35", "Received: 30", "at Object.toBe (jest/cart.test.js:19:23)", "Tests:       1 failed, 3 passed, 4 total"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("lost %q:\n%s", want, res.Text)
		}
	}
}
