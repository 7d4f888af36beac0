package deptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// module is the module path; every package it holds is checked.
const module = "github.com/omnictx/omni"

// pkg is the part of `go list -json` these tests read.
type pkg struct {
	ImportPath     string
	Name           string
	Dir            string
	Standard       bool
	DepOnly        bool
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	Imports        []string
	Deps           []string
	TestImports    []string
	XTestImports   []string
}

// rel is the package's path inside the module ("" for the root).
func (p *pkg) rel() string { return relPath(p.ImportPath) }

func relPath(importPath string) string {
	if importPath == module {
		return ""
	}
	return strings.TrimPrefix(importPath, module+"/")
}

// scratch reports a package in the git-ignored scratch directory
// (.gitignore: /tmp/), which a clean checkout does not have.
func scratch(rel string) bool { return rel == "tmp" || strings.HasPrefix(rel, "tmp/") }

// goList runs `go list -e -deps -json ./...` at the module root once and
// returns the module's own packages (sorted) and whether each listed import
// path is in the standard library.
var goList = sync.OnceValues(func() (*listing, error) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	cmd := exec.Command("go", "list", "-e", "-deps", "-json", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.Bytes())
	}
	l := &listing{std: map[string]bool{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		l.std[p.ImportPath] = p.Standard
		if !p.DepOnly && (p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/")) && !scratch(p.rel()) {
			l.own = append(l.own, &p)
		}
	}
	sort.Slice(l.own, func(i, j int) bool { return l.own[i].ImportPath < l.own[j].ImportPath })
	return l, nil
})

type listing struct {
	own []*pkg
	std map[string]bool
}

// isStd reports whether path is a standard-library package. Paths go list
// did not report (test-only imports) fall back to the toolchain's rule: the
// first element of a standard path has no dot.
func (l *listing) isStd(path string) bool {
	if s, ok := l.std[path]; ok {
		return s
	}
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func loadListing(t *testing.T) *listing {
	t.Helper()
	l, err := goList()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.own) == 0 {
		t.Fatal("go list found no packages in the module")
	}
	return l
}

// scope says which imports of a package a rule looks at.
type scope int

const (
	direct     scope = iota // the package's own imports
	withTests               // its imports and its tests' imports
	transitive              // every package it depends on, and its tests' imports
	linked                  // every package linked into its binary (its tests aside)
)

// rule is one import arrow that must not be drawn (ARCHITECTURE.md,
// "Layers": imports point from cmd down to events, never up
// or sideways between projections).
type rule struct {
	// name states the rule; reason says why it exists. Both are printed
	// with every violation.
	name, reason string
	// named are the packages (module-relative) the rule is about; the test
	// fails if one of them disappears, so a rename cannot make a rule
	// vacuous.
	named []string
	// applies selects the packages the rule checks (module-relative path).
	applies func(rel string) bool
	// bad reports whether importing imp breaks the rule.
	bad   func(l *listing, imp string) bool
	scope scope
}

func is(rels ...string) func(string) bool {
	return func(rel string) bool { return slices.Contains(rels, rel) }
}

func under(prefix string) func(string) bool {
	return func(rel string) bool { return strings.HasPrefix(rel, prefix+"/") }
}

func except(rels ...string) func(string) bool {
	return func(rel string) bool { return !slices.Contains(rels, rel) }
}

// onlyStdAnd allows the standard library and the named module packages.
func onlyStdAnd(rels ...string) func(*listing, string) bool {
	return func(l *listing, imp string) bool {
		if l.isStd(imp) {
			return false
		}
		for _, r := range rels {
			if imp == module+"/"+r {
				return false
			}
		}
		return true
	}
}

// anyOf forbids the given import paths and everything under them.
func anyOf(paths ...string) func(*listing, string) bool {
	return func(_ *listing, imp string) bool {
		for _, p := range paths {
			if imp == p || strings.HasPrefix(imp, strings.TrimSuffix(p, "/")+"/") {
				return true
			}
		}
		return false
	}
}

const (
	natsPrefix = "github.com/nats-io/"
	cobra      = "github.com/spf13/cobra"
	pflag      = "github.com/spf13/pflag"
	jetstream  = module + "/events/jetstream"
	cmdOmni    = module + "/cmd/omni"
)

// rules are the dependency direction of ARCHITECTURE.md as checks.
var rules = []rule{
	{
		name:    "events imports the standard library only",
		reason:  "events is the vocabulary at the centre (L0) that every package imports; an import there reaches every package, so it may import nothing of ours or anyone's",
		named:   []string{"events"},
		applies: is("events"),
		bad:     onlyStdAnd(),
	},
	{
		name:    "events/memlog and events/eventstest import only events and the standard library",
		reason:  "they sit beside events as its in-memory log and its conformance suite; every store's tests import them, so they must not drag another layer or a store into those tests",
		named:   []string{"events/memlog", "events/eventstest"},
		applies: is("events/memlog", "events/eventstest"),
		bad:     onlyStdAnd("events"),
	},
	{
		name:    "projections/* import only events, internal/shellcmd and the standard library, never each other",
		reason:  "a projection is a pure fold State × Event → State: no store, no clock, no I/O, no pipeline; replay and golden tests run each one alone, which an import of another projection would break. internal/shellcmd is a pure standard-library leaf (the stats family of a command reads its assignments)",
		named:   []string{"projections/ledger", "projections/stats", "projections/session"},
		applies: under("projections"),
		bad:     onlyStdAnd("events", "internal/shellcmd"),
	},
	{
		name:    "replay imports only events and the standard library",
		reason:  "replay declares its own Projection interface and folds whatever projections its caller passes; importing projections/* or a store would fix what it can replay",
		named:   []string{"replay"},
		applies: is("replay"),
		bad:     onlyStdAnd("events"),
	},
	{
		name:    "pipeline and its subpackages import the standard library, internal/shellcmd and each other only",
		reason:  "pipeline is the leaf (text in, text and plain facts out) that makes every distiller a golden test with no fixtures; its rooms (pipeline/distill, pipeline/internal/textline) and internal/shellcmd, the module's one reader of shell command lines, are standard-library leaves themselves. The one edge the layering foresees is pipeline → events, and adding it means changing ARCHITECTURE.md and this rule together",
		named:   []string{"pipeline", "pipeline/distill", "pipeline/internal/textline"},
		applies: func(rel string) bool { return rel == "pipeline" || strings.HasPrefix(rel, "pipeline/") },
		bad:     onlyStdAnd("internal/shellcmd", "pipeline/distill", "pipeline/internal/textline"),
	},
	{
		name:    "hooks depends on no NATS, cobra, events/jetstream or cmd/omni, even through another package or in its tests",
		reason:  "hooks appends through an injected events.Log and takes its inputs as values; the store adapter and the CLI are wired in from above by cmd/omni",
		named:   []string{"hooks"},
		applies: is("hooks"),
		bad:     anyOf(natsPrefix, cobra, pflag, jetstream, cmdOmni),
		scope:   transitive,
	},
	{
		name:    "only events/jetstream (and its test cluster jstest, run by hand by tools/natscluster), internal/daemon and internal/daemon/wire import NATS (github.com/nats-io/...)",
		reason:  "one adapter, named for its technology, owns the store on NATS; the daemon package serves its requests on the store's connection and its wire subpackage is the protocol's client half, split out so the thin hook client links nats.go without the server; events/jetstream/jstest starts real clusters of nats-servers for tests. NATS can then be upgraded or replaced in these places",
		named:   []string{"events/jetstream", "events/jetstream/jstest", "internal/daemon", "internal/daemon/wire"},
		applies: except("events/jetstream", "events/jetstream/jstest", "internal/daemon", "internal/daemon/wire", "tools/natscluster"),
		bad:     anyOf(natsPrefix),
		scope:   withTests,
	},
	{
		name:    "only cmd/omni, internal/daemon and internal/doctor import events/jetstream",
		reason:  "opening the store is a process concern: the daemon package opens it (the daemon, or a command in-process) and cmd/omni wires it; every package below them takes an events.Log (tools/natscluster only runs the test cluster of events/jetstream/jstest; internal/doctor, omni doctor's checks, reads the store's damage marker and free space beside it and never opens it)",
		named:   []string{"cmd/omni", "internal/daemon", "internal/doctor", "events/jetstream"},
		applies: except("cmd/omni", "internal/daemon", "internal/doctor", "events/jetstream", "internal/daemon/wire", "cmd/omni-hook", "tools/natscluster"),
		bad:     anyOf(jetstream),
		scope:   withTests,
	},
	{
		name:    "internal/daemon/wire imports nats.go and the standard library only, never the server",
		reason:  "it is linked into the thin hook client, whose start time is the hook's latency: a binary that links the embedded server started about 0.5–1 ms later (4.1–4.7 ms against 3.6–4.0 ms), and omni-hook answered in 3.8 ms against 5.2 ms for omni hook (2026-11-29)",
		named:   []string{"internal/daemon/wire"},
		applies: is("internal/daemon/wire"),
		bad: func(l *listing, imp string) bool {
			return imp != module+"/internal/daemon/wire/thin" && imp != module+"/internal/natsurl" && anyOf("github.com/nats-io/nats-server", module)(l, imp)
		},
		scope: transitive,
	},
	{
		name:    "cmd/omni-hook imports only internal/daemon/wire (wire/thin on Linux and macOS), internal/rewrite, internal/platform and the standard library",
		reason:  "the thin hook client must start fast; everything else is the daemon's job, reached through the wire (the PreToolUse decision, internal/rewrite, is answered in the client: it reads settings files and needs no store; internal/platform starts the daemon detached on every system)",
		named:   []string{"cmd/omni-hook"},
		applies: is("cmd/omni-hook"),
		bad:     onlyStdAnd("internal/daemon/wire", "internal/daemon/wire/thin", "internal/rewrite", "internal/platform"),
	},
	{
		name:    "only cmd/omni imports cobra",
		reason:  "flags, commands and os.Exit live only in cmd/omni",
		named:   []string{"cmd/omni"},
		applies: except("cmd/omni"),
		bad:     anyOf(cobra, pflag),
		scope:   withTests,
	},
	{
		name:    "nothing imports cmd/omni",
		reason:  "cmd/omni is the top layer (L3) that wires everything; arrows point only downward",
		named:   []string{"cmd/omni"},
		applies: except("cmd/omni"),
		bad:     anyOf(cmdOmni),
		scope:   withTests,
	},
	{
		name:    "internal/shellcmd imports the standard library only",
		reason:  "it is the one reader of shell command lines that hooks, pipeline and projections/stats share; as a pure leaf it adds nothing to what each of them may depend on",
		named:   []string{"internal/shellcmd"},
		applies: is("internal/shellcmd"),
		bad:     onlyStdAnd(),
	},
	{
		name:    "redact imports the standard library only (its test helper redact/redacttest too)",
		reason:  "the redaction stage runs at the entry of every door (the daemon, an in-process hook, exec, pipe, distill) before anything is recorded; a leaf with no dependency can run anywhere and costs nothing to link",
		named:   []string{"redact", "redact/redacttest"},
		applies: is("redact", "redact/redacttest"),
		bad:     onlyStdAnd(),
	},
	{
		name:    "internal/rewrite imports only internal/shellcmd, redact and the standard library",
		reason:  "it is linked into the thin hook client (omni-hook pretool), whose start time is paid before every Bash call; redact (a leaf, for the rules cache, which never copies a rule holding a credential) does no work at start since its sets and tables became switch statements and static data (it initialised in 0.09 ms before, GODEBUG=inittrace=1), and omni-hook pretool answered in 2.1–4.1 ms with it against 2.1–4.6 ms without, 5 rounds of 40 calls side by side (2026-12-02)",
		named:   []string{"internal/rewrite"},
		applies: is("internal/rewrite"),
		bad:     onlyStdAnd("internal/shellcmd", "redact"),
	},
	{
		name:    "internal/daemon/wire/thin imports golang.org/x/sys, internal/natsurl, internal/fileowner and the standard library only, never net or crypto/tls",
		reason:  "it is all the thin hook client links on Linux and macOS: linking net makes a cgo build dynamically linked, and the loader with the TLS and nats.go initialisation cost more than the rest of a hook call (a trivial Go binary started in 1.72 ms, one with encoding/json and net in 2.64 ms, with the TLS client of nats.go 3.72 ms, 2026-12-02)",
		named:   []string{"internal/daemon/wire/thin"},
		applies: is("internal/daemon/wire/thin"),
		bad: func(l *listing, imp string) bool {
			if imp == "net" || imp == "crypto/tls" {
				return true
			}
			return !l.isStd(imp) && !strings.HasPrefix(imp, "golang.org/x/sys/") && imp != module+"/internal/natsurl" && imp != module+"/internal/fileowner"
		},
		scope: transitive,
	},
	{
		name:    "internal/platform imports the standard library and golang.org/x/sys only",
		reason:  "it is every difference between the operating systems behind one interface, linked into the thin hook client and the store: a leaf adds nothing to what they may depend on, and the system calls it needs are all in x/sys",
		named:   []string{"internal/platform"},
		applies: is("internal/platform"),
		bad: func(l *listing, imp string) bool {
			return !l.isStd(imp) && !strings.HasPrefix(imp, "golang.org/x/sys/")
		},
	},
	{
		name:    "events/jetstream (and its test cluster jstest) never imports internal/daemon or its wire, even in its tests",
		reason:  "the store is a lower floor than the daemon that serves requests on it: what both must agree on (the embedded server's name, the default stream) is declared by the store, and the daemon's tests pin the wire client to it",
		named:   []string{"events/jetstream", "events/jetstream/jstest", "internal/daemon", "internal/daemon/wire"},
		applies: is("events/jetstream", "events/jetstream/jstest"),
		bad:     anyOf(module + "/internal/daemon"),
		scope:   withTests,
	},
	{
		name:    "internal/natsurl imports the standard library only",
		reason:  "it is linked by the store and by the thin hook client (the cluster URLs they print with credentials removed): a leaf adds nothing to what either may depend on",
		named:   []string{"internal/natsurl"},
		applies: is("internal/natsurl"),
		bad:     onlyStdAnd(),
		scope:   withTests,
	},
	{
		name:    "hooks/hosts imports only events, pipeline, redact, internal/shellcmd, internal/rewrite and the standard library",
		reason:  "each host's protocol reads a payload and renders a reply, nothing more: the Engine (hooks) imports it and owns the log, the lock and the pipeline's call; an import of hooks would be a cycle, and a store or the daemon would let a protocol do I/O the Engine does not see (redact is a pure library: its JSON string decoder reads a payload's large strings in one pass)",
		named:   []string{"hooks/hosts", "hooks"},
		applies: is("hooks/hosts"),
		bad:     onlyStdAnd("events", "pipeline", "pipeline/distill", "pipeline/internal/textline", "redact", "internal/shellcmd", "internal/rewrite"),
		scope:   withTests,
	},
	{
		name:    "cmd/omni-hook links none of regexp, net, crypto/tls, os/user, text/template, log or flag",
		reason:  "the thin hook client starts once per tool call and must start as fast as an empty Go program: regexp alone brought unicode's category tables, 11 KB built at every start, and a heavier package's initialisation and pages cost each call more than the rest of its start; omni-hook --help started in 1.43 ms with regexp and redact's tables built at start against 1.13 ms for an empty program and 1.14 ms without them (p50 of 400 interleaved runs, 2026-12-02)",
		named:   []string{"cmd/omni-hook"},
		applies: is("cmd/omni-hook"),
		bad: func(_ *listing, imp string) bool {
			switch imp {
			case "regexp", "regexp/syntax", "net", "crypto/tls", "os/user", "text/template", "html/template", "log", "flag":
				return true
			}
			return false
		},
		scope: linked,
	},
}

// imports returns the import paths of p that a rule of scope s looks at,
// each with how it is reached.
func imports(p *pkg, s scope) map[string]string {
	out := map[string]string{}
	add := func(paths []string, how string) {
		for _, i := range paths {
			if _, ok := out[i]; !ok {
				out[i] = how
			}
		}
	}
	add(p.Imports, "imports")
	if s == withTests || s == transitive {
		add(p.TestImports, "imports in its tests")
		add(p.XTestImports, "imports in its external tests")
	}
	if s == transitive || s == linked {
		add(p.Deps, "depends (indirectly) on")
	}
	return out
}

// violations checks every rule against pkgs and returns one message per
// package and broken rule, sorted. A message lists the offending imports,
// the package's own first, and at most maxListed of them.
func violations(l *listing, pkgs []*pkg) []string {
	const maxListed = 4
	var out []string
	for _, r := range rules {
		for _, p := range pkgs {
			if !r.applies(p.rel()) {
				continue
			}
			type hit struct{ imp, how string }
			var hits []hit
			for imp, how := range imports(p, r.scope) {
				if r.bad(l, imp) {
					hits = append(hits, hit{imp, how})
				}
			}
			if len(hits) == 0 {
				continue
			}
			sort.Slice(hits, func(i, j int) bool {
				di, dj := hits[i].how == "imports", hits[j].how == "imports"
				if di != dj {
					return di
				}
				return hits[i].imp < hits[j].imp
			})
			var b strings.Builder
			fmt.Fprintf(&b, "%s breaks a dependency rule:", p.ImportPath)
			for i, h := range hits {
				if i == maxListed {
					fmt.Fprintf(&b, "\n\t... and %d more", len(hits)-maxListed)
					break
				}
				fmt.Fprintf(&b, "\n\t%s %s", h.how, h.imp)
			}
			fmt.Fprintf(&b, "\n\trule: %s\n\twhy:  %s", r.name, r.reason)
			out = append(out, b.String())
		}
	}
	sort.Strings(out)
	return out
}

// TestDependencyDirection enforces the dependency direction over every package of the
// module (the git-ignored tmp/ scratch directory aside).
func TestDependencyDirection(t *testing.T) {
	l := loadListing(t)
	have := map[string]bool{}
	for _, p := range l.own {
		have[p.rel()] = true
	}
	for _, r := range rules {
		for _, n := range r.named {
			if !have[n] {
				t.Errorf("rule %q names package %s, which the module no longer has: update the rule with the layout", r.name, n)
			}
		}
	}
	for _, v := range violations(l, l.own) {
		t.Error(v)
	}
}

// TestRulesCatch feeds made-up packages to the checker: each must break
// exactly the rules it is meant to, so a rule that silently stopped matching
// shows up here.
func TestRulesCatch(t *testing.T) {
	l := &listing{std: map[string]bool{"fmt": true, "testing": true, "os": true}}
	m := func(rel string) string { return module + "/" + rel }
	tests := []struct {
		name     string
		pkg      pkg
		wantRule []string // names of the rules broken, in rules order
	}{
		{"events imports a module package", pkg{ImportPath: m("events"), Imports: []string{"fmt", m("pipeline")}},
			[]string{rules[0].name}},
		{"events imports a third-party package", pkg{ImportPath: m("events"), Imports: []string{"github.com/oklog/ulid/v2"}},
			[]string{rules[0].name}},
		{"events imports the standard library", pkg{ImportPath: m("events"), Imports: []string{"fmt", "os"}}, nil},
		{"memlog imports events", pkg{ImportPath: m("events/memlog"), Imports: []string{m("events"), "testing"}}, nil},
		{"eventstest imports hooks", pkg{ImportPath: m("events/eventstest"), Imports: []string{m("events"), m("hooks")}},
			[]string{rules[1].name}},
		{"a projection imports another", pkg{ImportPath: m("projections/stats"), Imports: []string{m("events"), m("projections/ledger")}},
			[]string{rules[2].name}},
		{"a new projection imports pipeline", pkg{ImportPath: m("projections/goals"), Imports: []string{m("pipeline")}},
			[]string{rules[2].name}},
		{"replay imports a projection", pkg{ImportPath: m("replay"), Imports: []string{m("events"), m("projections/ledger")}},
			[]string{rules[3].name}},
		{"pipeline imports events", pkg{ImportPath: m("pipeline"), Imports: []string{m("events")}},
			[]string{rules[4].name}},
		{"hooks reaches NATS through another package", pkg{ImportPath: m("hooks"), Imports: []string{m("events")},
			Deps: []string{m("events"), m("somewhere"), "github.com/nats-io/nats.go"}},
			[]string{rules[5].name}},
		{"hooks tests import jetstream", pkg{ImportPath: m("hooks"), TestImports: []string{jetstream}},
			[]string{rules[5].name, rules[7].name}},
		{"hooks imports cobra", pkg{ImportPath: m("hooks"), Imports: []string{cobra}},
			[]string{rules[5].name, rules[10].name}},
		{"cmd/omni imports NATS directly", pkg{ImportPath: cmdOmni, Imports: []string{jetstream, "github.com/nats-io/nats-server/v2/server"}},
			[]string{rules[6].name}},
		{"cmd/omni imports jetstream and cobra", pkg{ImportPath: cmdOmni, Imports: []string{jetstream, cobra}}, nil},
		{"jetstream imports NATS", pkg{ImportPath: jetstream, Imports: []string{m("events"), "github.com/nats-io/nats.go"}}, nil},
		{"the daemon imports NATS and jetstream", pkg{ImportPath: m("internal/daemon"), Imports: []string{jetstream, "github.com/nats-io/nats.go"}}, nil},
		{"a new package imports jetstream", pkg{ImportPath: m("mcp"), Imports: []string{jetstream}},
			[]string{rules[7].name}},
		{"wire links the server", pkg{ImportPath: m("internal/daemon/wire"), Imports: []string{"github.com/nats-io/nats.go"},
			Deps: []string{"github.com/nats-io/nats.go", "github.com/nats-io/nats-server/v2/server"}},
			[]string{rules[8].name}},
		{"omni-hook imports hooks", pkg{ImportPath: m("cmd/omni-hook"), Imports: []string{m("internal/daemon/wire"), m("hooks")}},
			[]string{rules[9].name}},
		{"omni-hook imports the wire", pkg{ImportPath: m("cmd/omni-hook"), Imports: []string{m("internal/daemon/wire"), "os"}}, nil},
		{"omni-hook imports the thin wire", pkg{ImportPath: m("cmd/omni-hook"), Imports: []string{m("internal/daemon/wire/thin"), "os"}}, nil},
		{"the thin wire links net", pkg{ImportPath: m("internal/daemon/wire/thin"), Imports: []string{"os", "golang.org/x/sys/unix"},
			Deps: []string{"os", "golang.org/x/sys/unix", "net"}},
			[]string{ruleNamed("internal/daemon/wire/thin imports")}},
		{"the thin wire imports nats.go", pkg{ImportPath: m("internal/daemon/wire/thin"), Imports: []string{"github.com/nats-io/nats.go"}},
			[]string{rules[6].name, ruleNamed("internal/daemon/wire/thin imports")}},
		{"a projection imports shellcmd", pkg{ImportPath: m("projections/stats"), Imports: []string{m("events"), m("internal/shellcmd")}}, nil},
		{"pipeline imports shellcmd", pkg{ImportPath: m("pipeline"), Imports: []string{"fmt", m("internal/shellcmd")}}, nil},
		{"the distillers import textline and shellcmd", pkg{ImportPath: m("pipeline/distill"), Imports: []string{m("pipeline/internal/textline"), m("internal/shellcmd")}}, nil},
		{"the distillers import hooks", pkg{ImportPath: m("pipeline/distill"), Imports: []string{m("hooks")}},
			[]string{rules[4].name}},
		{"shellcmd imports events", pkg{ImportPath: m("internal/shellcmd"), Imports: []string{m("events")}},
			[]string{rules[12].name}},
		{"platform imports x/sys", pkg{ImportPath: m("internal/platform"), Imports: []string{"os", "golang.org/x/sys/unix"}}, nil},
		{"platform imports events", pkg{ImportPath: m("internal/platform"), Imports: []string{m("events")}},
			[]string{ruleNamed("internal/platform imports")}},
		{"jetstream imports the wire", pkg{ImportPath: jetstream, Imports: []string{m("events"), m("internal/daemon/wire")}},
			[]string{ruleNamed("events/jetstream (and its test cluster jstest) never imports")}},
		{"jetstream tests import the daemon", pkg{ImportPath: jetstream, TestImports: []string{m("internal/daemon")}},
			[]string{ruleNamed("events/jetstream (and its test cluster jstest) never imports")}},
		{"jetstream imports natsurl", pkg{ImportPath: jetstream, Imports: []string{m("events"), m("internal/natsurl")}}, nil},
		{"the thin wire imports natsurl", pkg{ImportPath: m("internal/daemon/wire/thin"), Imports: []string{"os", m("internal/natsurl")}}, nil},
		{"hosts imports the pipeline and the rewrite", pkg{ImportPath: m("hooks/hosts"), Imports: []string{m("events"), m("pipeline"), m("internal/rewrite"), m("internal/shellcmd")}}, nil},
		{"hosts imports hooks", pkg{ImportPath: m("hooks/hosts"), Imports: []string{m("events"), m("hooks")}},
			[]string{ruleNamed("hooks/hosts imports")}},
		{"natsurl imports events", pkg{ImportPath: m("internal/natsurl"), Imports: []string{m("events")}},
			[]string{ruleNamed("internal/natsurl imports")}},
		{"omni-hook imports platform", pkg{ImportPath: m("cmd/omni-hook"), Imports: []string{m("internal/daemon/wire"), m("internal/platform")}}, nil},
		{"omni-hook links regexp", pkg{ImportPath: m("cmd/omni-hook"), Imports: []string{m("internal/rewrite"), "os"},
			Deps: []string{m("internal/rewrite"), "os", "regexp", "regexp/syntax"}},
			[]string{ruleNamed("cmd/omni-hook links none of")}},
		{"omni-hook's tests import regexp", pkg{ImportPath: m("cmd/omni-hook"), Imports: []string{m("internal/rewrite"), "os"},
			TestImports: []string{"regexp"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range violations(l, []*pkg{&tt.pkg}) {
				_, after, _ := strings.Cut(v, "\n\trule: ")
				name, _, _ := strings.Cut(after, "\n")
				if !slices.Contains(got, name) {
					got = append(got, name)
				}
			}
			order := func(s []string) {
				sort.Slice(s, func(i, j int) bool { return ruleIndex(s[i]) < ruleIndex(s[j]) })
			}
			order(got)
			if !slices.Equal(got, tt.wantRule) {
				t.Errorf("broken rules:\n got %q\nwant %q", got, tt.wantRule)
			}
		})
	}
}

func ruleIndex(name string) int {
	return slices.IndexFunc(rules, func(r rule) bool { return r.name == name })
}

// docProblems checks that package p has exactly one package doc comment,
// on one of its non-test files, starting "Package <name> " ("Command <dir> "
// for a command). read returns a file's source.
func docProblems(p *pkg, read func(path string) ([]byte, error)) []string {
	files := slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles)
	var problems, docs []string
	nonTest := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		path := filepath.Join(p.Dir, f)
		src, err := read(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p.ImportPath, err))
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), path, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p.ImportPath, err))
			continue
		}
		if af.Name.Name != p.Name {
			continue // another package in the directory (a //go:build ignore tool)
		}
		nonTest++
		if af.Doc == nil {
			continue
		}
		docs = append(docs, f)
		want := "Package " + p.Name + " "
		if p.Name == "main" {
			want = "Command " + filepath.Base(p.Dir) + " "
		}
		if text := af.Doc.Text(); !strings.HasPrefix(text, want) {
			first, _, _ := strings.Cut(text, "\n")
			problems = append(problems, fmt.Sprintf("%s: the package doc in %s starts %q, want %q", p.ImportPath, f, first, want+"..."))
		}
	}
	switch {
	case nonTest == 0:
		// tests only: nothing to document
	case len(docs) == 0:
		problems = append(problems, fmt.Sprintf("%s has no package doc: add doc.go with \"// Package %s ...\" above the package clause: every package says what it is for", p.ImportPath, p.Name))
	case len(docs) > 1:
		problems = append(problems, fmt.Sprintf("%s has %d package docs (%s): keep one, in doc.go or the package's main file", p.ImportPath, len(docs), strings.Join(docs, ", ")))
	}
	return problems
}

// TestPackageDocs checks every package of the module (the git-ignored tmp/
// scratch directory aside) with docProblems: exactly one package doc
// comment, in doc.go or the main file.
func TestPackageDocs(t *testing.T) {
	for _, p := range loadListing(t).own {
		for _, msg := range docProblems(p, os.ReadFile) {
			t.Error(msg)
		}
	}
}

// TestDocProblemsCatch runs the doc check on made-up packages.
func TestDocProblemsCatch(t *testing.T) {
	tests := []struct {
		name  string
		pkg   pkg
		files map[string]string
		want  []string // substrings, one per expected problem
	}{
		{"one doc", pkg{ImportPath: "m/a", Name: "a", Dir: "/a", GoFiles: []string{"doc.go", "a.go"}},
			map[string]string{"doc.go": "// Package a does one thing.\npackage a\n", "a.go": "package a\n"}, nil},
		{"doc after a license header", pkg{ImportPath: "m/a", Name: "a", Dir: "/a", GoFiles: []string{"a.go"}},
			map[string]string{"a.go": "// Copyright x.\n\n// Package a does one thing.\npackage a\n"}, nil},
		{"no doc", pkg{ImportPath: "m/a", Name: "a", Dir: "/a", GoFiles: []string{"a.go", "b.go"}},
			map[string]string{"a.go": "package a\n", "b.go": "// Comment not attached.\n\npackage a\n"}, []string{"has no package doc"}},
		{"two docs", pkg{ImportPath: "m/a", Name: "a", Dir: "/a", GoFiles: []string{"a.go", "b.go"}},
			map[string]string{"a.go": "// Package a does one thing.\npackage a\n", "b.go": "// Package a does another.\npackage a\n"},
			[]string{"has 2 package docs (a.go, b.go)"}},
		{"doc of the wrong shape", pkg{ImportPath: "m/a", Name: "a", Dir: "/a", GoFiles: []string{"a.go"}},
			map[string]string{"a.go": "// This package does one thing.\npackage a\n"}, []string{`starts "This package does one thing.", want "Package a ..."`}},
		{"a command", pkg{ImportPath: "m/cmd/tool", Name: "main", Dir: "/cmd/tool", GoFiles: []string{"main.go"}},
			map[string]string{"main.go": "// Command tool does one thing.\npackage main\n"}, nil},
		{"a doc only in a test file", pkg{ImportPath: "m/a", Name: "a", Dir: "/a", GoFiles: []string{"a.go", "a_test.go"}},
			map[string]string{"a.go": "package a\n", "a_test.go": "// Package a does one thing.\npackage a\n"}, []string{"has no package doc"}},
		{"an ignored tool of another package", pkg{ImportPath: "m/a", Name: "a", Dir: "/a", GoFiles: []string{"a.go"}, IgnoredGoFiles: []string{"gen.go"}},
			map[string]string{"a.go": "// Package a does one thing.\npackage a\n", "gen.go": "//go:build ignore\n\n// Gen writes tables.\npackage main\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := func(path string) ([]byte, error) {
				src, ok := tt.files[filepath.Base(path)]
				if !ok {
					return nil, fmt.Errorf("no file %s", path)
				}
				return []byte(src), nil
			}
			got := docProblems(&tt.pkg, read)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q, want %d matching %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q does not contain %q", got[i], w)
				}
			}
		})
	}
}

// ruleNamed returns the name of the rule whose name starts with prefix.
func ruleNamed(prefix string) string {
	for _, r := range rules {
		if strings.HasPrefix(r.name, prefix) {
			return r.name
		}
	}
	return "no rule named " + prefix
}
