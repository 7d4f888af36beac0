package distill

import (
	"strconv"
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// Build, package-manager and infrastructure distillers. They
// drop progress lines and keep diagnostics, errors, warnings and the
// tool's own verdict, verbatim.

// distillCargoBuild: cargo build/check/clippy/run/install. Drops progress
// lines ("Compiling x", "Downloaded y", ...); keeps every warning and
// error block, "Finished"/"Running" lines and the program's own output.
//
// cargo run: what follows cargo's "Running `…`" line is the program's own
// output and is never touched (a program may print "Compiling templates");
// with -q/--quiet cargo prints no status line to tell the two apart, so
// the run is not claimed.
func distillCargoBuild(d *dctx) bool {
	run := d.sub == "run" || d.sub == "r"
	if run && cargoQuiet(d.args) {
		return false
	}
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case run && strings.HasPrefix(t, "Running `"):
			return d.recognised(true, failing)
		case cargoProgress(t):
			d.drop(i)
		case strings.HasPrefix(t, "Finished ") || strings.HasPrefix(t, "Running `") || strings.HasPrefix(t, "Installed package") ||
			strings.HasPrefix(t, "Replaced package"):
			verdict = true
		case strings.HasPrefix(t, "error: could not compile"), strings.HasPrefix(t, "error: failed to"),
			strings.HasPrefix(t, "error[E"), strings.HasPrefix(t, "error: aborting"):
			verdict, failing = true, true
		}
	}
	return d.recognised(verdict, failing)
}

// cargoQuiet reports -q/--quiet among cargo's own arguments (before "--").
func cargoQuiet(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-q" || a == "--quiet" {
			return true
		}
	}
	return false
}

// ccPrograms are compiler and tool invocations echoed by make.
var ccPrograms = []string{"cc ", "gcc ", "g++ ", "c++ ", "clang ", "clang++ ", "ar ", "ranlib ", "ld ",
	"/usr/bin/cc ", "/usr/bin/c++ ", "/usr/bin/gcc ", "/usr/bin/g++ ", "/usr/bin/clang ", "/usr/bin/clang++ ",
	"/usr/bin/ar ", "/usr/bin/ranlib ", "nvcc ", "libtool: ", "mkdir -p ", "install -", "rm -f ", "echo "}

// distillMake: make, cmake, ninja and direct compiler runs. Drops echoed
// compiler command lines, directory changes and cmake/ninja progress; keeps
// every diagnostic with its code frame, and the verdict ("make: ***",
// "Built target", "ninja: build stopped", "FAILED:", "N errors
// generated").
func distillMake(d *dctx) bool { return distillMakeRun(d, false) }

// distillCompiler: a direct gcc/clang run, whose error diagnostics are its
// only verdict.
func distillCompiler(d *dctx) bool { return distillMakeRun(d, true) }

func distillMakeRun(d *dctx, compiler bool) bool {
	if !compiler && makeDryRun(d.args) {
		return false // the echoed commands are what was asked for
	}
	verdict, failing := false, false
	ran := false // make echoed a compiler run
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		l := d.line(i)
		switch {
		case strings.Contains(t, "*** ") && (strings.HasPrefix(t, "make") || strings.HasPrefix(t, "gmake")):
			verdict, failing = true, true
		case strings.HasPrefix(t, "ninja: build stopped"), strings.HasPrefix(t, "FAILED: "):
			verdict, failing = true, true
		case strings.HasSuffix(t, " errors generated.") || strings.HasSuffix(t, " error generated."):
			verdict, failing = true, true
		case strings.HasPrefix(t, "CMake Error"):
			verdict, failing = true, true
		case cDiagnostic(t, "error"):
			failing = true
			verdict = verdict || compiler
		case strings.HasPrefix(t, "Built target ") || (strings.HasPrefix(t, "[") && strings.Contains(t, "] Built target ")):
			verdict = true
		case strings.HasPrefix(t, "Build succeeded") || strings.HasPrefix(t, "ninja: no work to do"):
			verdict = true
		case hasPrefixAny(l, ccPrograms...):
			d.drop(i)
			ran = true
		case strings.HasPrefix(t, "make[") && (strings.Contains(t, "Entering directory") || strings.Contains(t, "Leaving directory")),
			strings.HasPrefix(t, "make: Entering directory"), strings.HasPrefix(t, "make: Leaving directory"),
			strings.HasPrefix(t, "make: Nothing to be done"):
			d.drop(i)
		case strings.HasPrefix(t, "[") && cmakeProgress(t):
			d.drop(i)
		case strings.HasPrefix(t, "-- ") && !containsAny(t, "rror", "arning", "ould not", "not found", "NOT found", "failed"):
			d.drop(i) // cmake configure chatter
		case strings.HasPrefix(t, "Scanning dependencies of target"):
			d.drop(i)
		}
	}
	// A plain Makefile prints no verdict of its own: a successful run
	// that echoed its compiler runs is recognised by them and its exit code.
	if !compiler && d.exit == 0 && ran {
		verdict = true
	}
	foldRepeatedWarnings(d)
	return d.recognised(verdict, failing)
}

// makeDryRun reports a make or ninja run that only prints its commands
// (-n, --dry-run, --just-print, --recon, or -n among combined short flags
// such as -nB): its output is the command lines the user asked to see.
func makeDryRun(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--dry-run", a == "--just-print", a == "--recon":
			return true
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'n'):
			return true
		}
	}
	return false
}

// warningFlag returns the flag a gcc/clang warning names at its end
// ("… [-Wunused-variable]" → "-Wunused-variable"), or "".
func warningFlag(t string) string {
	if !cDiagnostic(t, "warning") || !strings.HasSuffix(t, "]") {
		return ""
	}
	k := strings.LastIndex(t, "[-W")
	if k < 0 {
		return ""
	}
	return t[k+1 : len(t)-1]
}

// foldRepeatedWarnings folds compiler warnings that repeat one flag three
// times or more: the first such warning stays with its code frame and
// notes; each later one, with its frame and notes, goes, and one marker
// where the second one stood counts them:
//
//	[23 more -Wunused-variable diagnostics folded]
//
// An error is never folded, and neither is a warning that is a failure
// line. A "file: In function 'f':" context line goes when every diagnostic
// under it went.
func foldRepeatedWarnings(d *dctx) {
	type block struct{ a, b int } // lines [a, b): diagnostic, frame, notes
	byFlag := map[string][]block{}
	var order []string
	for i := 0; i < d.n(); i++ {
		f := warningFlag(d.trim(i))
		if f == "" || textline.IsFailureLine(d.raw(i)) {
			continue
		}
		j := i + 1
		for j < d.n() && !d.blank(j) && (jsFrameLine(d.raw(j)) || cDiagnostic(d.trim(j), "note")) {
			j++
		}
		if _, ok := byFlag[f]; !ok {
			order = append(order, f)
		}
		byFlag[f] = append(byFlag[f], block{i, j})
		i = j - 1
	}
	folded := false
	for _, f := range order {
		bs := byFlag[f]
		if len(bs) < minGroupSize {
			continue
		}
		for _, b := range bs[1:] {
			for k := b.a; k < b.b; k++ {
				d.drop(k)
			}
		}
		d.insert(bs[1].a, "["+strconv.Itoa(len(bs)-1)+" more "+f+" diagnostics folded]")
		folded = true
	}
	if !folded {
		return
	}
	// Context lines left with nothing under them.
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		if !d.keep[i] || !strings.Contains(t, ": In function ") && !strings.Contains(t, ": In member function ") {
			continue
		}
		under := false
		for j := i + 1; j < d.n(); j++ {
			u := d.trim(j)
			if strings.Contains(u, ": In function ") || strings.Contains(u, ": In member function ") {
				break
			}
			if d.keep[j] && (cDiagnostic(u, "warning") || cDiagnostic(u, "error") || cDiagnostic(u, "note")) {
				under = true
				break
			}
			if !cDiagnostic(u, "warning") && !cDiagnostic(u, "note") && !jsFrameLine(d.raw(j)) && !d.blank(j) && d.keep[j] {
				under = true // something else follows: keep the context
				break
			}
		}
		if !under {
			d.drop(i)
		}
	}
}

// cmakeProgress reports "[ 42%] Building C object …", "[ 50%] Linking …"
// and ninja's "[3/10] Building CXX object …".
func cmakeProgress(t string) bool {
	j := strings.IndexByte(t, ']')
	if j < 0 {
		return false
	}
	rest := strings.TrimSpace(t[j+1:])
	return hasPrefixAny(rest, "Building ", "Linking ", "Scanning ", "Generating ", "Automatic MOC", "Automatic RCC",
		"Copying ", "Creating ", "Running ", "Performing ", "No ", "Completed ")
}

// cDiagnostic reports "file:line[:col]: kind: …" for kind "error" or
// "warning" (gcc, clang, go vet style).
func cDiagnostic(t, kind string) bool {
	k := strings.Index(t, ": "+kind+":")
	if k <= 0 {
		k = strings.Index(t, ": fatal "+kind+":")
	}
	if k <= 0 {
		return false
	}
	p := t[:k]
	return strings.Contains(p, ":") && !strings.ContainsAny(p, " \t")
}

// distillDockerBuild: docker build (classic and BuildKit plain/tty
// progress). Drops cache and layer-id lines, intermediate-container and
// context-transfer chatter, BuildKit done/cached/sha256/extract lines;
// keeps "Step N/M" and "#N [k/m]" step headers, the commands' own output,
// errors and the result ("Successfully built/tagged", "naming to",
// "writing image").
func distillDockerBuild(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case hasPrefixAny(t, "Successfully built ", "Successfully tagged "):
			verdict = true
		case strings.Contains(t, "naming to ") || strings.Contains(t, "writing image ") || (strings.HasPrefix(t, "[+] Building") && strings.Contains(t, "FINISHED")):
			verdict = true
		case strings.Contains(t, "failed to solve") || strings.Contains(t, "returned a non-zero code") || strings.HasPrefix(t, "ERROR: ") ||
			strings.Contains(t, "ERROR [") || strings.HasPrefix(t, "error: "):
			verdict, failing = true, true
		case t == "---> Using cache" || strings.HasPrefix(t, "---> Running in ") || (strings.HasPrefix(t, "---> ") && isHexish(t[5:])):
			d.drop(i)
		case strings.HasPrefix(t, "Removing intermediate container ") || strings.HasPrefix(t, "Sending build context to Docker daemon"):
			d.drop(i)
		case strings.HasPrefix(t, "#") && buildkitNoise(t):
			d.drop(i)
		case strings.HasPrefix(t, "=> ") && (strings.HasPrefix(t, "=> CACHED") || strings.HasPrefix(t, "=> [internal]") || strings.HasPrefix(t, "=> => ") || strings.HasPrefix(t, "=> resolve") || strings.HasPrefix(t, "=> exporting") || strings.HasPrefix(t, "=> load")):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// isHexish reports a layer id: hex digits, optionally after "sha256:".
func isHexish(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "sha256:")
	if len(s) < 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// buildkitNoise reports BuildKit plain-progress lines that carry no step
// output: "#5 DONE 0.3s", "#5 CACHED", "#5 sha256:… 1.2MB / 3.4MB",
// "#5 extracting sha256:…", "#1 [internal] load …", "#2 transferring …".
func buildkitNoise(t string) bool {
	sp := strings.IndexByte(t, ' ')
	if sp < 2 || !isDigits(t[1:sp]) {
		return false
	}
	rest := t[sp+1:]
	switch {
	case strings.HasPrefix(rest, "DONE "), rest == "DONE", rest == "CACHED", strings.HasPrefix(rest, "sha256:"),
		strings.HasPrefix(rest, "extracting "), strings.HasPrefix(rest, "[internal] "), strings.HasPrefix(rest, "transferring "),
		strings.HasPrefix(rest, "resolve "), strings.HasPrefix(rest, "exporting layers"), strings.HasPrefix(rest, "exporting manifest"),
		strings.HasPrefix(rest, "exporting config"), strings.HasPrefix(rest, "exporting attestation"),
		strings.HasPrefix(rest, "load "), strings.HasPrefix(rest, "preparing layers"), strings.HasPrefix(rest, "writing layer"):
		return true
	}
	return false
}

// distillNpmInstall: npm/pnpm/yarn/bun install, ci, add, update, remove.
// Drops HTTP fetch, timing and verbose log lines, update notices, and
// yarn/pnpm/bun progress; keeps warnings, deprecations, errors, and the
// verdict ("added N packages", "up to date", "found N vulnerabilities",
// "Done in", "N packages installed").
func distillNpmInstall(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case hasPrefixAny(t, "npm ERR!", "npm error", "ERR_PNPM", " ERR_PNPM", "error ") || strings.Contains(t, "ERR_PNPM_"):
			failing = true
			verdict = true
		case hasPrefixAny(t, "npm http ", "npm timing ", "npm info ", "npm verb ", "npm sill ", "npm notice", "npm http fetch"):
			d.drop(i)
		case hasPrefixAny(t, "[1/", "[2/", "[3/", "[4/", "[5/") && strings.HasSuffix(t, "..."):
			d.drop(i)
		case strings.HasPrefix(t, "yarn install v") || strings.HasPrefix(t, "yarn add v") || strings.HasPrefix(t, "bun install v") || strings.HasPrefix(t, "bun add v"):
			d.drop(i)
		case strings.HasPrefix(t, "Progress: resolved ") || (strings.Trim(t, "+-") == "" && len(t) > 3):
			d.drop(i)
		case hasPrefixAny(t, "Resolving dependencies", "Resolved, downloaded and extracted", "info No lockfile found", "info There appears to be trouble"):
			d.drop(i)
		case npmVerdict(t):
			verdict = true
		}
	}
	return d.recognised(verdict, failing)
}

// npmVerdict reports a package manager's result line.
func npmVerdict(t string) bool {
	if n := strings.IndexByte(t, ' '); n > 0 && isDigits(t[:n]) && containsAny(t, " packages installed", " package installed") {
		return true
	}
	return hasPrefixAny(t, "added ", "removed ", "changed ", "up to date", "audited ", "found ", "success ", "Done in ",
		"Already up to date", "Lockfile is up to date", "Packages: ", "Checked ", "Saved lockfile", "dependencies:",
		"devDependencies:") ||
		strings.Contains(t, " vulnerabilit")
}

// distillPipInstall: pip install/download/uninstall. Drops "Collecting",
// "Downloading", "Using cached", progress bars, build-step chatter and
// "Requirement already satisfied" lines; keeps "Installing collected
// packages", warnings, errors and "Successfully installed …".
func distillPipInstall(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case hasPrefixAny(t, "Successfully installed ", "Successfully uninstalled ", "Successfully downloaded ", "Saved "):
			verdict = true
		case strings.HasPrefix(t, "ERROR: "):
			verdict, failing = true, true
		case hasPrefixAny(t, "Collecting ", "Downloading ", "Using cached ", "Obtaining ", "Preparing metadata", "Installing build dependencies",
			"Getting requirements to build", "Building wheel for ", "Created wheel for ", "Stored in directory", "Building wheels for collected",
			"Requirement already satisfied: ", "Looking in indexes:", "Processing ", "Attempting uninstall:", "Found existing installation:",
			"Uninstalling ", "Preparing editable metadata", "Checking if build backend", "Building editable for", "Running setup.py",
			"Downloaded ", "Looking in links:", "File was already downloaded"):
			d.drop(i)
		case strings.Contains(t, "━━") || strings.Contains(t, "|█") || strings.Contains(t, "████"):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillApt: apt/apt-get install, upgrade, remove, update. Drops fetch,
// unpack, setup and trigger lines; keeps "N upgraded, N newly installed,
// …", "already the newest version", warnings and E: errors.
func distillApt(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.Contains(t, " upgraded, ") && strings.Contains(t, " newly installed"):
			verdict = true
		case strings.Contains(t, "is already the newest version"), strings.HasPrefix(t, "All packages are up to date"),
			strings.HasPrefix(t, "Reading package lists... Done") && d.sub == "update":
			verdict = true
		case strings.HasPrefix(t, "E: "):
			verdict, failing = true, true
		case hasPrefixAny(t, "Get:", "Hit:", "Ign:", "Reading package lists", "Building dependency tree", "Reading state information",
			"Selecting previously unselected package", "(Reading database", "Preparing to unpack", "Unpacking ", "Setting up ",
			"Processing triggers for ", "Fetched ", "debconf: ", "update-alternatives: ", "Created symlink ", "invoke-rc.d:",
			"Need to get ", "After this operation", "Calculating upgrade", "Removing ", "Purging configuration"):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillTerraform: terraform/tofu apply, destroy, init, validate,
// refresh, import (a plan passes byte for byte, see isVerbatim). Drops
// refresh/read/still-working progress and provider installation lines;
// keeps the planned changes, every resource result, errors and the verdict
// ("Apply complete!", "Destroy complete!", "successfully initialized",
// "The configuration is valid").
func distillTerraform(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := strings.TrimSpace(strings.TrimLeft(d.trim(i), "│╷╵"))
		switch {
		case hasPrefixAny(t, "Apply complete!", "Destroy complete!", "Terraform has been successfully initialized",
			"OpenTofu has been successfully initialized", "Success! The configuration is valid", "Import successful!",
			"No changes.", "Resource instance"):
			verdict = true
		case strings.HasPrefix(t, "Error: "):
			verdict, failing = true, true
		case strings.Contains(t, ": Refreshing state...") || strings.Contains(t, ": Reading...") || strings.Contains(t, ": Read complete after") ||
			strings.Contains(t, ": Still creating...") || strings.Contains(t, ": Still modifying...") ||
			strings.Contains(t, ": Still destroying...") || strings.Contains(t, ": Still reading..."):
			d.drop(i)
		case hasPrefixAny(t, "- Finding ", "- Installing ", "- Installed ", "- Reusing previous version", "- Using previously-installed",
			"Initializing the backend...", "Initializing provider plugins...", "Initializing modules...", "- Downloading "):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}
