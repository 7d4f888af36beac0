package distill

import (
	"strings"
)

// .NET, Maven, Gradle, RSpec and PHPUnit distillers (the rules of
// runners.go).

// dotnetBuildNoise reports dotnet/MSBuild progress lines.
func dotnetBuildNoise(t string) bool {
	return hasPrefixAny(t, "Determining projects to restore", "All projects are up-to-date for restore",
		"Restored ", "Starting test execution", "A total of ", "VSTest version", "Microsoft (R) Test Execution",
		"Copyright (c) Microsoft", "MSBuild version", "Welcome to .NET", "Build started", "Time Elapsed") ||
		(strings.Contains(t, " -> ") && (strings.HasSuffix(t, ".dll") || strings.HasSuffix(t, ".exe") || strings.HasSuffix(t, "/")))
}

// distillDotnetTest: dotnet test. Drops restore/build progress and
// "Passed X [N ms]" lines; keeps "Failed X", error messages, stack traces
// and the "Failed!/Passed! - Failed: N, Passed: N, …" tallies.
func distillDotnetTest(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "Passed ") && strings.HasSuffix(t, "]"):
			d.dropPass(i)
		case strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ "):
			d.dropPass(i)
		case strings.HasPrefix(t, "Passed!") || strings.HasPrefix(t, "Test Run Successful"):
			verdict = true
		case strings.HasPrefix(t, "Failed!") || strings.HasPrefix(t, "Test Run Failed") || strings.HasPrefix(t, "Test Run Aborted"):
			verdict, failing = true, true
		case strings.HasPrefix(t, "Total tests:"):
			verdict = true
		case strings.HasPrefix(t, "Failed:") || strings.HasPrefix(t, "Failed: "):
			if n, ok := leadingCount(strings.TrimSpace(strings.TrimPrefix(t, "Failed:"))); ok && n > 0 {
				failing = true
			}
		case strings.Contains(t, "error ") && strings.Contains(t, "): error"):
			failing = true
		case strings.HasPrefix(t, "Build FAILED"):
			verdict, failing = true, true
		case dotnetBuildNoise(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillDotnetBuild: dotnet build/restore/publish. Drops progress and
// "X -> path.dll" lines; keeps warnings, errors and the "Build
// succeeded/FAILED" verdict with its counts.
func distillDotnetBuild(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "Build succeeded"):
			verdict = true
		case strings.HasPrefix(t, "Build FAILED"):
			verdict, failing = true, true
		case dotnetBuildNoise(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillMaven: mvn. Drops downloads, transfer progress, "Running x",
// per-class tallies without failures and blank [INFO] lines; keeps
// [ERROR]/[WARNING], failing tests, the Results section, "Tests run:"
// totals, and BUILD SUCCESS/FAILURE.
func distillMaven(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		body := strings.TrimSpace(strings.TrimPrefix(t, "[INFO]"))
		switch {
		case strings.Contains(t, "BUILD SUCCESS"):
			verdict = true
		case strings.Contains(t, "BUILD FAILURE"):
			verdict, failing = true, true
		case hasPrefixAny(body, "Downloading from ", "Downloaded from ", "Downloading: ", "Downloaded: ", "Progress (") ||
			hasPrefixAny(t, "Downloading from ", "Downloaded from ", "Progress ("):
			d.drop(i)
		case strings.HasPrefix(t, "[INFO]") && (body == "" || strings.HasPrefix(body, "Running ")):
			d.drop(i)
		case strings.HasPrefix(t, "[INFO]") && strings.HasPrefix(body, "Tests run:") && strings.Contains(body, " - in ") &&
			strings.Contains(body, "Failures: 0, Errors: 0"):
			d.drop(i)
		case strings.HasPrefix(t, "[INFO]") && hasPrefixAny(body, "Copying ", "Using '", "skip non existing", "Nothing to compile",
			"Changes detected", "Recompiling the module", "Building jar:", "Using auto detected provider",
			"No sources to compile", "No tests to run"):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillGradle: gradle. Drops "> Task" lines that did not fail,
// downloads and progress; keeps failing tasks and tests, errors, warnings,
// "N tests completed, M failed" and BUILD SUCCESSFUL/FAILED.
func distillGradle(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "BUILD SUCCESSFUL"):
			verdict = true
		case strings.HasPrefix(t, "BUILD FAILED"), strings.HasPrefix(t, "FAILURE: "):
			verdict, failing = true, true
		case strings.HasPrefix(t, "> Task ") && !strings.Contains(t, "FAILED"):
			d.drop(i)
		case hasPrefixAny(t, "Download ", "Downloading ", "<", "Starting a Gradle Daemon", "Daemon will be stopped"):
			if strings.HasPrefix(t, "<") && !strings.Contains(t, "%") {
				continue
			}
			d.drop(i)
		case strings.HasSuffix(t, " PASSED"):
			d.dropPass(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillRspec: rspec. Drops progress-dot lines; keeps failures, "N
// examples, M failures" and the rerun list.
func distillRspec(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.Contains(t, " example") && strings.Contains(t, " failure"):
			if _, ok := leadingCount(t); ok {
				verdict = true
				if n, ok := countBefore(t, " failure"); ok && n > 0 {
					failing = true
				}
			}
		case strings.Contains(t, "error occurred outside of examples") || strings.Contains(t, "errors occurred outside of examples"):
			verdict, failing = true, true
		case rspecDots(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

func rspecDots(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '.', '*', 'F':
		default:
			return false
		}
	}
	return strings.ContainsAny(t, ".*")
}

// distillPhpunit: phpunit. Drops the banner and progress lines; keeps
// failures, and "OK (N tests, …)" or "Tests: N, Assertions: …".
func distillPhpunit(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "OK (") || strings.HasPrefix(t, "OK, but"):
			verdict = true
		case strings.HasPrefix(t, "Tests: ") && strings.Contains(t, "Assertions:"):
			verdict = true
			if containsAny(t, "Failures:", "Errors:") {
				failing = true
			}
		case t == "FAILURES!" || t == "ERRORS!":
			failing = true
		case strings.HasPrefix(t, "PHPUnit ") && strings.Contains(t, " by "), hasPrefixAny(t, "Runtime:", "Configuration:"):
			d.drop(i)
		case phpunitProgress(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// phpunitProgress reports "..F.S   63 / 120 ( 52%)".
func phpunitProgress(t string) bool {
	sp := strings.IndexByte(t, ' ')
	if sp <= 0 || !strings.HasSuffix(t, "%)") || !strings.Contains(t, " / ") {
		return false
	}
	for i := 0; i < sp; i++ {
		switch t[i] {
		case '.', 'F', 'E', 'W', 'S', 'R', 'I', 'N', 'D':
		default:
			return false
		}
	}
	return strings.Contains(t[:sp], ".")
}
