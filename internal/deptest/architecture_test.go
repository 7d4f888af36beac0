package deptest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// archNames are the declared names of one package, read from every
// non-test .go file of its directory whatever its build tags (a name
// declared only for darwin is as real as one for linux).
type archNames struct {
	top     map[string]bool            // funcs, types, consts, vars
	members map[string]map[string]bool // type → its methods and struct fields
}

func readNames(dir string, errorf func(string, ...any)) archNames {
	n := archNames{top: map[string]bool{}, members: map[string]map[string]bool{}}
	member := func(typ, name string) {
		if n.members[typ] == nil {
			n.members[typ] = map[string]bool{}
		}
		n.members[typ][name] = true
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			errorf("parse %s: %v", f, err)
			continue
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					n.top[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if g, ok := typ.(*ast.IndexExpr); ok {
					typ = g.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, id := range s.Names {
							n.top[id.Name] = true
						}
					case *ast.TypeSpec:
						n.top[s.Name.Name] = true
						var fields *ast.FieldList
						switch tt := s.Type.(type) {
						case *ast.StructType:
							fields = tt.Fields
						case *ast.InterfaceType:
							fields = tt.Methods
						}
						if fields == nil {
							continue
						}
						for _, fl := range fields.List {
							for _, id := range fl.Names {
								member(s.Name.Name, id.Name)
							}
							if len(fl.Names) == 0 { // embedded: the type's name
								e := fl.Type
								if st, ok := e.(*ast.StarExpr); ok {
									e = st.X
								}
								switch e := e.(type) {
								case *ast.Ident:
									member(s.Name.Name, e.Name)
								case *ast.SelectorExpr:
									member(s.Name.Name, e.Sel.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	return n
}

var (
	backquoted = regexp.MustCompile("`([^`\n]+)`")
	codeName   = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// TestArchitectureNames: every Go package path and Go name that
// ARCHITECTURE.md writes in backquotes exists, so the map cannot rot. A
// span with anything but letters, digits and _ . / - in it (a command
// line, a flag, a format verb) is prose and is not checked, and neither is
// a fenced code block. What is checked:
//   - a module package path (`hooks`, `internal/daemon/wire/thin`) or
//     the last element of one (`thin`);
//   - pkg.Name and pkg.Type.Member, where pkg is a module package path or
//     the last element of one (`hooks.Engine.commit`, `thin.CallTimed`):
//     Name is declared in that package, Member is a method or field of
//     Type (an embedded type counts by its name);
//   - a bare Go name (`callDaemon`, `Invoked`): declared in some module
//     package;
//   - a path whose first element holds a dot (`golang.org/x/sys`) is
//     another module's and is not checked.
func TestArchitectureNames(t *testing.T) {
	l := loadListing(t)
	root := ""
	for _, p := range l.own {
		if p.rel() == "" || !strings.Contains(p.rel(), "/") {
			root = strings.TrimSuffix(p.Dir, string(filepath.Separator)+filepath.FromSlash(p.rel()))
			break
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	checked := architectureNames(l, stripFences(string(doc)), t.Errorf)
	if checked < 40 {
		t.Fatalf("only %d names checked: the backquote convention or this test's reading of it changed", checked)
	}
}

// stripFences drops fenced code blocks (``` ... ```).
func stripFences(doc string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// architectureNames checks every backquoted name of doc (see
// TestArchitectureNames), reports each one that does not exist through
// errorf, and returns how many it checked.
func architectureNames(l *listing, doc string, errorf func(string, ...any)) int {
	byRel := map[string]*pkg{}
	byLast := map[string][]*pkg{}
	for _, p := range l.own {
		byRel[p.rel()] = p
		last := p.rel()[strings.LastIndex(p.rel(), "/")+1:]
		byLast[last] = append(byLast[last], p)
	}
	cache := map[string]archNames{}
	names := func(p *pkg) archNames {
		if n, ok := cache[p.Dir]; ok {
			return n
		}
		n := readNames(p.Dir, errorf)
		cache[p.Dir] = n
		return n
	}
	declaredAnywhere := func(name string) bool {
		for _, p := range l.own {
			n := names(p)
			if n.top[name] {
				return true
			}
			for _, m := range n.members {
				if m[name] {
					return true
				}
			}
		}
		return false
	}
	checked := 0
	for _, m := range backquoted.FindAllStringSubmatch(doc, -1) {
		span := m[1]
		if !codeName.MatchString(span) || strings.HasPrefix(span, "-") || strings.HasPrefix(span, ".") {
			continue
		}
		first, _, _ := strings.Cut(span, "/")
		if strings.Contains(first, ".") && strings.Contains(span, "/") {
			continue // another module's path
		}
		checked++
		if !strings.Contains(span, ".") {
			if byRel[span] != nil || len(byLast[span]) > 0 {
				continue
			}
			if strings.Contains(span, "/") || !identifier.MatchString(span) {
				errorf("ARCHITECTURE.md: `%s` is no package of the module", span)
				continue
			}
			if !declaredAnywhere(span) {
				errorf("ARCHITECTURE.md: `%s` is declared in no package of the module", span)
			}
			continue
		}
		parts := strings.Split(span, ".")
		var cands []*pkg
		if p := byRel[parts[0]]; p != nil {
			cands = []*pkg{p}
		} else if !strings.Contains(parts[0], "/") {
			cands = byLast[parts[0]]
		}
		if len(cands) == 0 || len(parts) > 3 {
			errorf("ARCHITECTURE.md: `%s`: no package %q in the module", span, parts[0])
			continue
		}
		found := false
		for _, p := range cands {
			n := names(p)
			switch len(parts) {
			case 2:
				found = found || n.top[parts[1]]
			case 3:
				found = found || n.top[parts[1]] && n.members[parts[1]][parts[2]]
			}
		}
		if !found {
			errorf("ARCHITECTURE.md: `%s` is not declared in package %s", span, parts[0])
		}
	}
	return checked
}

// TestArchitectureNamesCatchesRot: the checker reports a renamed package,
// function, method and field, and passes real ones.
func TestArchitectureNamesCatchesRot(t *testing.T) {
	l := loadListing(t)
	for _, c := range []struct {
		doc  string
		fail bool
	}{
		{"`hooks` `hooks.Engine.commit` `events.Invoked.Params` `thin.CallTimed` `internal/daemon/wire/thin` `callDaemon`", false},
		{"`golang.org/x/sys` `set -o pipefail` `--store` `%w`", false},
		{"`hooks/nosuchroom`", true},
		{"`hooks.PreToolRewrite`", true},
		{"`hooks.Engine.commitAll`", true},
		{"`events.Invoked.Parameters`", true},
		{"`noSuchFunctionAnywhere`", true},
		{"`nosuchpkg.Name`", true},
	} {
		var reported []string
		architectureNames(l, c.doc, func(format string, a ...any) { reported = append(reported, fmt.Sprintf(format, a...)) })
		if (len(reported) > 0) != c.fail {
			t.Errorf("%s: reported %q, want a report: %v", c.doc, reported, c.fail)
		}
	}
}
