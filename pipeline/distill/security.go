package distill

import (
	"strings"
)

// Security-scanner distillers: trivy,
// semgrep, gosec, bandit and npm/pnpm/yarn audit. A finding is the answer:
// every finding line (identifier, severity, package or rule, location,
// message) stays, and so do the scanner's own totals, verbatim. Totals and
// findings are read apart (counting severities per line would make trivy's
// own "Total: … (CRITICAL: 1 …)" line 2 CRITICAL of 1): a
// total line is never
// taken for a finding, and trivy's finding rows are checked against its own
// "Total:" before anything is dropped. What goes is layout and repetition:
// table borders, advisory links derivable from the identifier, quoted code
// frames whose location the finding names, and INFO-level log lines.

// The security-scanner distillers, by name.
var (
	dTrivy    = &Distiller{"trivy", distillTrivy}
	dSemgrep  = &Distiller{"semgrep", distillSemgrep}
	dGosec    = &Distiller{"gosec", distillGosec}
	dBandit   = &Distiller{"bandit", distillBandit}
	dNpmAudit = &Distiller{"npm-audit", distillNpmAudit}
)

// pickSecurityDistiller picks a security scanner's distiller.
func pickSecurityDistiller(prog, sub string) *Distiller {
	switch prog {
	case "trivy":
		switch sub {
		case "image", "i", "fs", "filesystem", "rootfs", "repo", "repository", "config", "conf", "sbom", "vm", "k8s", "kubernetes":
			return dTrivy
		}
	case "semgrep":
		switch sub {
		case "login", "logout", "publish", "lsp", "show", "install-semgrep-pro", "test", "validate":
			return nil
		}
		return dSemgrep
	case "gosec":
		return dGosec
	case "bandit":
		return dBandit
	case "npm", "pnpm", "yarn", "bun":
		if sub == "audit" {
			return dNpmAudit
		}
	}
	return nil
}

// boxBorder reports a line made only of box-drawing characters and blanks
// (table borders and rules: ─ │ ┌ ┬ ┐ ├ ┼ ┤ └ ┴ ┘ ═ ╭ ╮ ╰ ╯ ━, and the ○ of
// semgrep's banner), with at least one horizontal stroke: layout, no datum.
func boxBorder(t string) bool {
	stroke := false
	for _, r := range t {
		switch r {
		case '─', '═', '━':
			stroke = true
		case '│', '┌', '┬', '┐', '├', '┼', '┤', '└', '┴', '┘', '╭', '╮', '╰', '╯', '╞', '╪', '╡', '╘', '╧', '╛', '╒', '╤', '╕', '○', ' ', '\t':
		default:
			return false
		}
	}
	return stroke
}

// tableCells splits a "│ a │ b │" row into its trimmed cells; nil when t is
// not such a row.
func tableCells(t string) []string {
	if !strings.HasPrefix(t, "│") || !strings.HasSuffix(t, "│") || len(t) < 2*len("│") {
		return nil
	}
	parts := strings.Split(t[len("│"):len(t)-len("│")], "│")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// scanSeverity reports a severity word as scanners print it.
func scanSeverity(s string) bool {
	switch s {
	case "CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN":
		return true
	}
	return false
}

// trivyLogLevel returns the level of a trivy log line ("2024-04-14T10:00:00Z
// INFO [vuln] …"), or "".
func trivyLogLevel(t string) string {
	if len(t) < 11 || t[0] < '0' || t[0] > '9' || t[4] != '-' {
		return ""
	}
	sp := strings.IndexAny(t, " \t")
	if sp < 0 {
		return ""
	}
	rest := strings.TrimLeft(t[sp:], " \t")
	end := strings.IndexAny(rest, " \t")
	if end < 0 {
		end = len(rest)
	}
	switch lv := rest[:end]; lv {
	case "DEBUG", "INFO", "WARN", "ERROR", "FATAL":
		return lv
	}
	return ""
}

// trivyFrame reports a line of the code frame under a secret or
// misconfiguration finding: "   3 [ KEY = …", "  12 ┌ FROM x", "  13 │ …",
// "   1   context".
func trivyFrame(l string) bool {
	s := strings.TrimLeft(l, " ")
	if len(s) == len(l) {
		return false
	}
	k := 0
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == 0 {
		return false
	}
	rest := s[k:]
	return rest == "" || strings.HasPrefix(rest, " [") || strings.HasPrefix(rest, " ┌") || strings.HasPrefix(rest, " │") ||
		strings.HasPrefix(rest, " └") || strings.HasPrefix(rest, "   ") || rest == " " || rest == "  "
}

// distillTrivy: trivy image/fs/repo/config/… with the table format (JSON,
// SARIF and the like pass whole as structured payloads). Keeps each
// target's header, every "Total:"/"Tests:"/"Failures:" line, every finding
// row and its wrapped title, the secret and misconfiguration findings with
// their descriptions and locations, WARN/ERROR/FATAL log lines and the
// report summary; drops INFO/DEBUG log lines, table borders, the rows that
// only hold an avd.aquasec.com link, "See https://avd…" lines and quoted
// code frames. Its verdict is a total (or the report summary). Finding
// rows are counted apart from the totals; more rows than the totals state
// means the layout was not understood, and the output passes raw.
func distillTrivy(d *dctx) bool {
	verdict, failing := false, false
	totals, rows := 0, 0
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch lv := trivyLogLevel(t); {
		case lv == "INFO" || lv == "DEBUG":
			d.drop(i)
			continue
		case lv == "ERROR" || lv == "FATAL":
			verdict, failing = true, true
			continue
		case lv != "":
			continue
		}
		switch {
		case strings.HasPrefix(t, "Total: ") || strings.HasPrefix(t, "Failures: "):
			n, ok := summedCount(t[strings.IndexByte(t, ' ')+1:])
			if !ok {
				continue
			}
			verdict = true
			failing = failing || n > 0
			if strings.HasPrefix(t, "Total: ") {
				totals += n
			}
		case strings.HasPrefix(t, "Tests: ") && strings.Contains(t, "FAILURES:"):
			verdict = true
		case t == "Report Summary":
			verdict = true
		case boxBorder(t):
			d.drop(i)
		case strings.HasPrefix(t, "See https://avd.aquasec.com/"):
			d.drop(i)
		case strings.HasPrefix(t, "│"):
			cells := tableCells(t)
			if cells == nil {
				continue
			}
			if severityRow(cells) {
				rows++ // a vulnerability or license finding
				continue
			}
			if linkOnlyRow(cells) {
				d.drop(i)
			}
		case trivyFrame(stripEscapes(d.line(i))):
			d.drop(i)
		}
	}
	if rows > totals {
		return false
	}
	return d.recognised(verdict, failing)
}

// severityRow reports a table row with a severity cell: one finding.
func severityRow(cells []string) bool {
	for _, c := range cells {
		if scanSeverity(c) {
			return true
		}
	}
	return false
}

// linkOnlyRow reports a table row whose only non-empty cell is one link:
// the advisory URL trivy prints under each title.
func linkOnlyRow(cells []string) bool {
	link := false
	for _, c := range cells {
		switch {
		case c == "":
		case !link && strings.HasPrefix(c, "https://") && !strings.ContainsAny(c, " \t"):
			link = true
		default:
			return false
		}
	}
	return link
}

// semgrepFrame reports a line of a quoted code frame, "  12┆ code",
// "   ⋮┆----" or "  ▶▶┆ Autofix ▶ …".
func semgrepFrame(t string) bool {
	k := strings.Index(t, "┆")
	if k <= 0 {
		return false
	}
	g := strings.TrimSpace(t[:k])
	return isDigits(g) || g == "⋮" || g == "▶▶"
}

// distillSemgrep: semgrep scan/ci with the text format (--json and --sarif
// pass whole). Keeps the findings box ("N Code Findings"), each file, each
// rule line (❯❯❱, ❯❱, ❱) with its full message, the scan summary and "Ran N
// rules on M files: K findings."; drops box borders, quoted code frames
// (12┆ …), "Details: https://sg.run/…" links and the sign-in promotions.
// Its verdict is the "Ran … findings." line or the findings box.
func distillSemgrep(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case strings.HasPrefix(t, "Ran ") && strings.Contains(t, " rule") && strings.HasSuffix(t, ".") && strings.Contains(t, " finding"):
			verdict = true
			if k := strings.LastIndex(t, ": "); k > 0 {
				if n, ok := summedCount(t[k+2:]); ok && n > 0 {
					failing = true
				}
			}
		case strings.HasPrefix(t, "│") && strings.Contains(t, " Finding"):
			verdict = true
			if n, ok := summedCount(strings.TrimPrefix(t, "│")); ok && n > 0 {
				failing = true
			}
		case strings.HasPrefix(t, "found ") && strings.Contains(t, " issue"), strings.Contains(t, "and found ") && strings.Contains(t, " issue"):
			// older semgrep: "Ran 25 rules and found 8 issues"
			verdict = true
			if n, ok := countBefore(t, " issue"); ok && n > 0 {
				failing = true
			}
		case strings.HasPrefix(t, "[ERROR]") || strings.HasPrefix(t, "Fatal error") || strings.HasPrefix(t, "semgrep error"):
			verdict, failing = true, true
		case boxBorder(t):
			d.drop(i)
		case semgrepFrame(t):
			d.drop(i)
		case strings.HasPrefix(t, "Details: https://sg.run/"):
			d.drop(i)
		case strings.HasPrefix(t, "💎") || strings.HasPrefix(t, "⚡"):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// gosecFrame reports a quoted source line under a gosec finding: "    40:
// code" or "  > 41: code".
func gosecFrame(t string) bool {
	t = strings.TrimPrefix(t, "> ")
	c := strings.IndexByte(t, ':')
	return c > 0 && isDigits(t[:c])
}

// distillGosec: gosec with the text format (the default). Keeps every
// finding line "[path:line] - G104 (CWE-703): message (Confidence: …,
// Severity: …)", the "Golang errors" sections, non-empty autofix text,
// gosec's log lines that report an error, and the Summary block with its
// "Issues : N"; drops the routine "[gosec] …" log lines (rules, imports,
// files checked), the quoted source lines under each finding and empty
// "Autofix:" lines. Its verdict is the Summary's issue count.
func distillGosec(d *dctx) bool {
	verdict, failing := false, false
	summary, inFinding := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case d.blank(i):
			inFinding = false
		case strings.HasPrefix(t, "[gosec] "):
			if !containsAny(t, "rror", "anic", "ailed", "arning") {
				d.drop(i)
			}
		case strings.HasPrefix(t, "[") && strings.Contains(t, "] - G"):
			inFinding = true
			failing = true
		case inFinding && gosecFrame(t):
			d.drop(i)
		case t == "Autofix:":
			d.drop(i)
		case t == "Summary:":
			summary = true
		case summary && strings.HasPrefix(t, "Issues") && strings.Contains(t, ":"):
			if n, ok := summedCount(t[strings.IndexByte(t, ':')+1:]); ok {
				verdict = true
				failing = failing || n > 0
			}
		case strings.HasPrefix(t, "Golang errors in file"):
			failing = true
		}
	}
	return d.recognised(verdict, failing)
}

// banditFrame reports a quoted source line under a bandit finding:
// "44\tcode" (a line number, a tab).
func banditFrame(l string) bool {
	k := 0
	for k < len(l) && l[k] >= '0' && l[k] <= '9' {
		k++
	}
	return k > 0 && k < len(l) && l[k] == '\t'
}

// distillBandit: bandit with the screen/text format. Keeps every ">>
// Issue:" with its Severity/Confidence, CWE and Location lines, the "Code
// scanned" and "Run metrics" totals, skipped files and warnings; drops the
// "[main] INFO" log lines, the "Run started" timestamp, "More Info:" links,
// the quoted source lines and the dashed separators. Its verdict is "Run
// metrics:" or "No issues identified.".
func distillBandit(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case strings.HasPrefix(t, "[main]") && strings.Contains(t, "INFO"):
			d.drop(i)
		case strings.HasPrefix(t, "Run started:"):
			d.drop(i)
		case strings.HasPrefix(t, "More Info: "):
			d.drop(i)
		case len(t) >= 10 && strings.Trim(t, "-") == "":
			d.drop(i)
		case banditFrame(stripEscapes(d.line(i))):
			d.drop(i)
		case strings.HasPrefix(t, ">> Issue: "):
			failing = true
		case t == "Run metrics:" || strings.HasPrefix(t, "No issues identified"):
			verdict = true
		}
	}
	return d.recognised(verdict, failing)
}

// distillNpmAudit: npm, pnpm, yarn and bun audit (--json passes whole).
// Keeps every advisory (package, range, severity, title and link, fix,
// dependency chain, path) and the "N vulnerabilities (…)" total; drops
// table borders (pnpm and yarn print findings as tables). Its verdict is
// the total, "found 0 vulnerabilities" or npm's own error.
func distillNpmAudit(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case strings.Contains(t, " vulnerabilit") && !strings.Contains(t, "│"):
			n, ok := summedCount(strings.TrimPrefix(t, "found "))
			if !ok {
				continue
			}
			verdict = true
			failing = failing || n > 0
		case strings.HasPrefix(t, "No known vulnerabilities found"):
			verdict = true
		case strings.HasPrefix(t, "npm error") || strings.HasPrefix(t, "npm ERR!") || strings.HasPrefix(t, "ERR_PNPM_"):
			verdict, failing = true, true
		case boxBorder(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}
