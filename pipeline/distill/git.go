package distill

import (
	"strconv"
	"strings"
)

// Git distillers: status, diff and show, log, and push, pull,
// fetch and clone. Enumerating forms
// (--stat, --name-only, --oneline, blame, branch, ...) never reach them:
// isEnumeration passes those whole.

// gitStatusUntrackedCap is the number of untracked paths git status keeps
// by name; the rest are counted in one marker line. A count
// alone would make an agent that needs the new files' names run the
// command again; 100 covers a fuzz corpus or a fresh
// checkout's build output while bounding a runaway listing.
const gitStatusUntrackedCap = 100

// distillGitStatus: long-form git status. Drops the `(use "git …")` hint
// lines; keeps the branch, upstream state, every staged, modified and
// conflicted path, and untracked paths up to gitStatusUntrackedCap (all of
// them when -u/-uall/--untracked-files asked for them).
func distillGitStatus(d *dctx) bool {
	verdict := false
	// -u/-uall/--untracked-files asks for the untracked paths: all stay.
	capUntracked := true
	for _, a := range d.args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--untracked-files") || strings.HasPrefix(a, "-u") && !strings.HasPrefix(a, "--") {
			capUntracked = false
		}
	}
	untracked, extra, lastKept := false, 0, -1
	count := 0
	for i := 0; i < d.n(); i++ {
		l := d.line(i)
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			untracked = t == "Untracked files:"
		}
		switch {
		case hasPrefixAny(t, "On branch ", "HEAD detached ", "Not currently on any branch", "nothing to commit", "No commits yet",
			"Your branch ", "Changes to be committed:", "Changes not staged for commit:", "Untracked files:",
			"You have unmerged paths", "Unmerged paths:", "interactive rebase in progress", "You are currently"):
			verdict = true
		case strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") && (l[0] == ' ' || l[0] == '\t') &&
			hasPrefixAny(t, "(use \"git ", "(commit or discard", "(fix conflicts", "(all conflicts fixed", "(create/copy files",
				"(see more in", "(use \"", "(and have"):
			d.drop(i)
		case untracked && l[0] == '\t':
			count++
			if capUntracked && count > gitStatusUntrackedCap {
				d.drop(i)
				extra++
			} else {
				lastKept = i
			}
		}
	}
	if extra > 0 && lastKept >= 0 {
		d.insert(lastKept+1, "[OMNI: "+strconv.Itoa(extra)+" more untracked paths not shown]")
	}
	return verdict && d.exit == 0
}

// distillGitLog: git log in its default (medium) format, with or without
// -p. Keeps each "commit <hash>" line and the subject line of its message,
// and for -p every diff header, hunk header and +/- line; drops Author,
// Date and Merge lines, message bodies, index and ---/+++ lines and
// context lines.
func distillGitLog(d *dctx) bool { return gitDiffLike(d, true) }

// distillGitDiff: git diff and git show. Keeps "diff --git" lines, mode,
// rename and binary lines, every hunk header and every +/- line (hunk
// bodies are walked by their line counts, so a removed "-- x" line is
// never taken for a header); drops index and ---/+++ lines and context
// lines. For show, the commit line and subject are kept as in git log.
func distillGitDiff(d *dctx) bool { return gitDiffLike(d, d.sub == "show") }

func gitDiffLike(d *dctx, log bool) bool {
	const (
		stOut = iota
		stCommitHead
		stSubject
		stBody
		stFileHead
	)
	st := stOut
	oldLeft, newLeft := 0, 0
	verdict := false
	for i := 0; i < d.n(); i++ {
		l := d.line(i)
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case l == "" || l[0] == ' ':
				oldLeft--
				newLeft--
				d.drop(i)
				continue
			case l[0] == '-':
				oldLeft--
				continue
			case l[0] == '+':
				newLeft--
				continue
			case l[0] == '\\':
				continue
			}
			oldLeft, newLeft = 0, 0 // the hunk ended early: read the line as a header
		}
		switch {
		case strings.HasPrefix(l, "diff --cc ") || strings.HasPrefix(l, "diff --combined ") || strings.HasPrefix(l, "@@@ "):
			return false // combined diffs of merges: not parsed, pass raw
		case strings.HasPrefix(l, "diff --git "):
			st = stFileHead
			verdict = true
		case strings.HasPrefix(l, "@@ "):
			o, n, ok := parseHunkHeader(l)
			if !ok {
				return false
			}
			oldLeft, newLeft = o, n
			st = stOut
			verdict = true
		case log && strings.HasPrefix(l, "commit ") && isHexish(firstWord(l[7:])):
			st = stCommitHead
			verdict = true
		case st == stCommitHead:
			if l == "" {
				st = stSubject
				continue
			}
			if hasPrefixAny(l, "Author:", "AuthorDate:", "Commit:", "CommitDate:", "Date:", "Merge:") {
				d.drop(i)
			}
		case st == stSubject:
			if strings.TrimSpace(l) != "" {
				st = stBody // the subject line stays
			}
		case st == stBody:
			if strings.HasPrefix(l, "    ") || l == "" {
				d.drop(i)
				continue
			}
			st = stOut
		case st == stFileHead:
			switch {
			case strings.HasPrefix(l, "index "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "):
				d.drop(i)
			}
		}
	}
	if d.exit != 0 {
		// git diff --exit-code / --quiet: 1 means "there are differences".
		return verdict && d.exit == 1 && hasArg(d.args, "--exit-code")
	}
	return verdict
}

// firstWord returns s up to its first blank.
func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@" and returns the old and new
// line counts (1 when omitted).
func parseHunkHeader(l string) (oldN, newN int, ok bool) {
	rest := strings.TrimPrefix(l, "@@ ")
	end := strings.Index(rest, " @@")
	if end < 0 {
		return 0, 0, false
	}
	parts := strings.Fields(rest[:end])
	if len(parts) != 2 || parts[0][0] != '-' || parts[1][0] != '+' {
		return 0, 0, false
	}
	count := func(p string) (int, bool) {
		p = p[1:]
		if c := strings.IndexByte(p, ','); c >= 0 {
			if !isDigits(p[:c]) || !isDigits(p[c+1:]) {
				return 0, false
			}
			n, err := strconv.Atoi(p[c+1:])
			return n, err == nil
		}
		return 1, isDigits(p)
	}
	oldN, ok1 := count(parts[0])
	newN, ok2 := count(parts[1])
	return oldN, newN, ok1 && ok2
}

// distillGitRemote: git push, pull, fetch and clone. Drops the object
// counting, compressing, receiving and resolving progress lines; a counter
// redrawn with carriage returns (--progress) reads as its final "done."
// state, and the transfer total stays; keeps the refs updated, the merge summary, conflicts,
// errors and hints.
func distillGitRemote(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case hasPrefixAny(t, "remote: Enumerating objects", "remote: Counting objects", "remote: Compressing objects",
			"remote: Total ", "remote: Resolving deltas", "Enumerating objects:", "Counting objects:", "Compressing objects:",
			"Writing objects:", "Receiving objects:", "Resolving deltas:", "Unpacking objects:", "Delta compression using up to",
			"Updating files:", "Checking out files:", "Filtering content:", "Total ") && !strings.Contains(t, "error"):
			// Redrawn counters (--progress, or a terminal) stay as their
			// last state when it finished ("…100% (1436/1436), done.") or
			// is the transfer total; the redraws go, and so do the plain
			// final counter lines git prints without --progress.
			// The transfer total ("Total 32 (delta 0), reused 0 …") is a
			// count line and stays in either form.
			if d.termView(i) {
				last := strings.TrimSpace(d.views[i])
				if !strings.HasSuffix(last, "done.") && !hasPrefixAny(last, "remote: Total ", "Total ") {
					d.drop(i)
				}
			} else if !hasPrefixAny(t, "remote: Total ", "Total ") {
				d.drop(i)
			}
		case hasPrefixAny(t, "To ", "From ", "Everything up-to-date", "Already up to date", "Already up-to-date", "Updating ",
			"Fast-forward", "Merge made by", "Cloning into", "Successfully rebased", "Current branch"),
			strings.Contains(t, " -> "):
			verdict = true
		case hasPrefixAny(t, "error:", "fatal:", "! [rejected]", "! [remote rejected]", "CONFLICT", "Automatic merge failed"):
			verdict, failing = true, true
		}
	}
	return d.recognised(verdict, failing)
}
