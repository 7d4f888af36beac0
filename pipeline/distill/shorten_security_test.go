package distill_test

import (
	"strings"
	"testing"
)

func TestSecurityDistillers(t *testing.T) {
	trivyRow := func(cve, sev string) string {
		return "│ libx │ " + cve + " │ " + sev + " │ fixed │ 1.0 │ 1.1 │ libx: something is wrong │\n" +
			"│      │               │          │       │     │     │ https://avd.aquasec.com/nvd/" + strings.ToLower(cve) + " │\n" +
			"├──────┼───────────────┼──────────┼───────┼─────┼─────┼──────────────────────────┤\n"
	}
	logs := dtRepeat("2026-11-29T10:00:0%dZ\tINFO\t[vuln] Detecting vulnerabilities...\n", 8)
	cases := []dtCase{
		{name: "trivy: the total line is kept verbatim and never counted as a finding", cmd: "trivy image app:1", exit: 0,
			in: logs + "\napp:1 (debian 12)\n==================\nTotal: 2 (UNKNOWN: 0, LOW: 0, MEDIUM: 0, HIGH: 1, CRITICAL: 1)\n\n" +
				trivyRow("CVE-2026-0001", "CRITICAL") + trivyRow("CVE-2026-0002", "HIGH"),
			distiller: "trivy",
			keep:      []string{"Total: 2 (UNKNOWN: 0, LOW: 0, MEDIUM: 0, HIGH: 1, CRITICAL: 1)", "CVE-2026-0001 │ CRITICAL", "CVE-2026-0002 │ HIGH"},
			gone:      []string{"Detecting vulnerabilities", "https://avd.aquasec.com/nvd/cve-2026-0001"}},
		{name: "trivy: more finding rows than its own total means an unknown layout", cmd: "trivy image app:1", exit: 0,
			in: logs + "Total: 1 (UNKNOWN: 0, LOW: 0, MEDIUM: 0, HIGH: 1, CRITICAL: 0)\n\n" +
				trivyRow("CVE-2026-0001", "CRITICAL") + trivyRow("CVE-2026-0002", "HIGH"), raw: true},
		{name: "trivy: a failing run without a total", cmd: "trivy image --exit-code 1 app:1", exit: 1, in: logs, raw: true},
		{name: "trivy: fatal error", cmd: "trivy image app:1", exit: 1,
			in:        logs + "2026-11-29T10:00:09Z\tFATAL\tFatal error\trun error: image scan error: unable to find the specified image \"app:1\"\n",
			distiller: "trivy", keep: []string{"FATAL\tFatal error"}, gone: []string{"[vuln] Detecting"}},
		{name: "semgrep: a failing run with no finding", cmd: "semgrep --config auto --error", exit: 1,
			in: dtRepeat("  progress %d\n", 12) + "Ran 12 rules on 4 files: 0 findings.\n", raw: true},
		{name: "gosec: no summary", cmd: "gosec ./...", exit: 1, in: dtRepeat("[gosec] 2026/11/29 10:00:00 Checking file: /x/f%d.go\n", 12), raw: true},
		{name: "bandit: clean run", cmd: "bandit -r src", exit: 0,
			in:        dtRepeat("[main]\tINFO\tprofile include tests: None %d\n", 8) + "Run started:2026-11-29 10:00:00.000000\n\nTest results:\n\tNo issues identified.\n\nCode scanned:\n\tTotal lines of code: 120\n\tTotal lines skipped (#nosec): 0\n\nRun metrics:\n\tTotal issues (by severity):\n\t\tUndefined: 0\n\t\tLow: 0\n\t\tMedium: 0\n\t\tHigh: 0\nFiles skipped (0):\n",
			distiller: "bandit", keep: []string{"No issues identified.", "Total lines of code: 120", "Low: 0"}, gone: []string{"profile include tests"}},
		{name: "npm audit: no verdict", cmd: "npm audit", exit: 1, in: dtRepeat("something %d\n", 12), raw: true},
		{name: "pnpm audit table", cmd: "pnpm audit", exit: 1,
			in: dtRepeat("┌─────────────────────┬────────────────────────────────────────────┐\n│ high                │ Prototype Pollution in lodash %d            │\n├─────────────────────┼────────────────────────────────────────────┤\n│ Package             │ lodash                                     │\n└─────────────────────┴────────────────────────────────────────────┘\n", 4) +
				"4 vulnerabilities found\nSeverity: 4 high\n",
			distiller: "npm-audit", keep: []string{"Prototype Pollution in lodash 3", "4 vulnerabilities found", "Severity: 4 high"}, gone: []string{"┌──"}},
	}
	for _, c := range cases {
		c.run(t)
	}
}
