package pipeline

import (
	"os"
	"strings"
	"testing"
)

// TestGitLogThreeTimesOneMarker: `git log --oneline -40` run three times
// folds the second and third runs into one marker each, with one handle,
// the same both times, although some subjects name failure words
// ("never group failures", "hooks fail open"). Red when Decide judges
// lines with IsFailureLine alone: the subjects split the run into
// several markers and leave those subjects in place.
func TestGitLogThreeTimesOneMarker(t *testing.T) {
	b, err := os.ReadFile("testdata/failurejudge/git-log-oneline-40.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	const cmd = "git log --oneline -40"
	if !strings.Contains(text, "hooks fail open") || !IsFailureLine("a1e1cb4 daemon: ... hooks fail open and retry") {
		t.Fatal("fixture: want a subject IsFailureLine alone calls a failure")
	}
	v := newFakeView()
	var handles []string
	for run := 0; run < 3; run++ {
		d := dtDecide(t, Request{Text: text, Source: cmd}, v)
		for _, k := range d.Delivered {
			if _, ok := v.seen[k]; !ok {
				v.seen[k] = Seen{Scope: ScopeSession, Source: cmd}
			}
		}
		if run == 0 {
			if len(d.Folds) != 0 {
				t.Fatalf("first run folded %d runs", len(d.Folds))
			}
			continue
		}
		if len(d.Folds) != 1 || d.Folds[0].Kind != MarkerWhole || strings.Count(d.Text, "\n") != 1 {
			t.Fatalf("run %d: want one whole marker, got %d folds:\n%s", run+1, len(d.Folds), d.Text)
		}
		handles = append(handles, d.Folds[0].Handle)
	}
	if handles[0] != handles[1] {
		t.Fatalf("handles differ: %v", handles)
	}
}

// TestFailureJudgeKeepsStatements: in a commit listing, git's own failure
// lines and any line without a commit's shape are judged by IsFailureLine;
// outside a commit listing a subject-shaped line is too. Red when
// isCommitLine accepts any line, or failureJudge ignores the command.
func TestFailureJudgeKeepsStatements(t *testing.T) {
	text := "abc1234 fix: retry when the upload failed\nfatal: bad revision 'nope'\nerror: pathspec 'x' did not match\n"
	lines := SplitLines(nil, text)
	cases := []struct {
		cmd, line string
		want      bool
	}{
		{"git log --oneline -5", "abc1234 fix: retry when the upload failed", false},
		{"git log --oneline --graph | head -20", "* abc1234 (HEAD -> main) test: fail fast on error", false},
		{"git log --oneline -5", "fatal: bad revision 'nope'", true},
		{"git log --oneline -5", "error: pathspec 'x' did not match", true},
		{"git log --oneline -5 && make", "abc1234 fix: retry when the upload failed", true},
		{"cat notes.txt", "abc1234 fix: retry when the upload failed", true},
		{"git status", "abc1234 fix: retry when the upload failed", true},
	}
	for _, c := range cases {
		if got := failureJudge(c.cmd, text, lines)(c.line); got != c.want {
			t.Errorf("%q in %q: failure %v, want %v", c.line, c.cmd, got, c.want)
		}
	}
	// The default format: message lines indented by four spaces.
	full := "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@b>\n\n    tests: the flaky upload test failed twice\n"
	if failureJudge("git log -3", full, SplitLines(nil, full))("    tests: the flaky upload test failed twice\n") {
		t.Error("a message line of git log's default format judged a failure")
	}
}

// TestDecideShortenedRerunReturnsOriginal: a rerun whose short form (with
// a cut marker) the reader was shown folds whole into one marker whose
// handle names the tool's original bytes. Red without shortenedWhole (the
// cut marker line then stays and the seen lines fold as runs of the short
// form).
func TestDecideShortenedRerunReturnsOriginal(t *testing.T) {
	short := dtLines("kept", 6, 600) + "[OMNI: 40 lines omitted, omni retrieve 0123456789abcdef for full output]\n" + dtLines("tail", 3, 300)
	orig := dtLines("kept", 6, 600) + dtLines("cut", 40, 4000) + dtLines("tail", 3, 300)
	v := newFakeView().see(ScopeSession, "pytest", short)
	d := dtDecide(t, Request{Text: short, Original: orig, Source: "pytest"}, v)
	if len(d.Folds) != 1 {
		t.Fatalf("want one fold, got %d:\n%s", len(d.Folds), d.Text)
	}
	f := d.Folds[0]
	if f.Kind != MarkerShortened || f.Block != orig || f.Handle != HandleOf(orig) {
		t.Fatalf("fold kind %s, block is original %v", f.Kind, f.Block == orig)
	}
	if want := renderShortened(10, 49, f.Handle) + "\n"; d.Text != want {
		t.Fatalf("text %q, want %q", d.Text, want)
	}
	// Without the original the cut marker is never folded into a run.
	d = dtDecide(t, Request{Text: short, Source: "pytest"}, v)
	if !strings.Contains(d.Text, "[OMNI: 40 lines omitted") {
		t.Fatalf("omni's cut marker folded into a run:\n%s", d.Text)
	}
}

// TestDecideProjectBesideCutMarkerOnly: a project run whose only company is
// one of omni's own cut markers is dropped (delivered), since the reader
// would read only markers. Red when dropProjectIfOnlyMarkers counts the cut
// marker as content.
func TestDecideProjectBesideCutMarkerOnly(t *testing.T) {
	run := dtLines("proj", 6, 600)
	text := run + "[OMNI: 3 lines omitted, omni retrieve 579f21a703105fd4 for full output]\n"
	v := newFakeView().see(ScopeProject, "cat x", run)
	v.seen[1] = Seen{Scope: ScopeSession} // the reader holds something
	req := Request{Text: text, Source: "cat x"}
	if d := dtDecide(t, req, v); len(d.Folds) != 0 {
		t.Fatalf("a project marker beside a cut marker alone:\n%s", d.Text)
	}
}
