package distill

import (
	"strings"
)

// The go toolchain's non-test commands: go build, vet and
// install, go get, and go mod tidy/download/verify. A successful build or
// vet prints nothing; a failing one prints "# package" headers, each
// diagnostic "path.go:line:col: message" with its tab-indented
// continuation lines (have/want), and "go:" errors. All of that stays.
// What goes is module-fetch progress in go get and go mod ("go: downloading
// m v1", "go: finding module for package p"), whose results ("go: added",
// "go: found", "go: upgraded") stay. A build's "go: downloading" lines stay
// too, as go test's do.

// dGoBuild is the go build/vet/install/get/mod distiller.
var dGoBuild = &Distiller{"go-build", distillGoBuild}

// pickGoBuildDistiller picks the distiller of go's non-test commands.
func pickGoBuildDistiller(prog, sub string, rest []string) *Distiller {
	if prog != "go" {
		return nil
	}
	switch sub {
	case "build", "vet", "install", "get":
		return dGoBuild
	case "mod":
		sub2, _ := subcommand(rest)
		if sub2 == "tidy" || sub2 == "download" || sub2 == "verify" {
			return dGoBuild
		}
	}
	return nil
}

// goDiagnostic reports a compiler or vet diagnostic, "path.go:line:col:
// message" (vet prefixes type errors with "vet: ").
func goDiagnostic(t string) bool {
	t = strings.TrimPrefix(t, "vet: ")
	if _, ok := diagLocation(t); !ok {
		return false
	}
	c := strings.IndexByte(t, ':')
	return c > 3 && (strings.HasSuffix(t[:c], ".go") || strings.HasSuffix(t[:c], ".s") || strings.HasSuffix(t[:c], ".mod") ||
		strings.HasSuffix(t[:c], ".c") || strings.HasSuffix(t[:c], ".work"))
}

// goFetchProgress reports module-fetch progress lines.
func goFetchProgress(t string) bool {
	return strings.HasPrefix(t, "go: downloading ") || strings.HasPrefix(t, "go: finding module for package ") ||
		strings.HasPrefix(t, "go: extracting ")
}

// distillGoBuild: go build, vet, install, get and go mod tidy/download/
// verify (not -json, which passes as a structured payload, nor -x or -n,
// whose command echo is what was asked for). On a failing run its verdict
// is a diagnostic or a "go:" error; on a run that succeeded, the
// toolchain's own result lines ("go: added …", "all modules verified") or
// its silence: an output made only of fetch progress. Anything else on a
// successful run (go build -v's package list, a tool's chatter) passes raw.
func distillGoBuild(d *dctx) bool {
	if hasArg(d.args, "-x", "-n", "-json") {
		return false
	}
	fetch := d.sub == "get" || d.sub == "mod"
	verdict, failing, other := false, false, false
	for i := 0; i < d.n(); i++ {
		if d.blank(i) {
			continue
		}
		t := d.plain(i)
		l := d.line(i)
		switch {
		case goFetchProgress(t):
			if fetch {
				d.drop(i)
			}
		case hasPrefixAny(t, "go: added ", "go: upgraded ", "go: downgraded ", "go: removed ", "go: found ") || t == "all modules verified":
			verdict = true
		case strings.HasPrefix(t, "# "):
			failing = true // a package header: its diagnostics follow
		case goDiagnostic(t):
			verdict, failing = true, true
		case strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "        "):
			// a diagnostic's continuation (have/want, notes)
		case strings.HasPrefix(t, "go: ") || strings.HasPrefix(t, "package ") || strings.Contains(t, "no required module provides package") ||
			strings.HasPrefix(t, "build constraints exclude") || strings.HasPrefix(t, "vet: "):
			if d.exit != 0 {
				verdict, failing = true, true
			} else {
				other = true
			}
		default:
			other = true
		}
	}
	if d.exit != 0 {
		return verdict && failing
	}
	if failing {
		return false
	}
	return verdict || !other
}
