package deptest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestNoExitInLibraries: only a main package ends the process. A library
// package returns its error to cmd/omni, which maps it to an exit code in
// one place; an os.Exit below it would skip the caller's deferred cleanup
// and decide an exit code nobody above can see.
func TestNoExitInLibraries(t *testing.T) {
	l := loadListing(t)
	checked := 0
	for _, p := range l.own {
		if p.Name == "main" {
			continue
		}
		for _, f := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
			path := filepath.Join(p.Dir, f)
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, pos := range exitCalls(af) {
				t.Errorf("%s calls os.Exit: return the error to the command instead", fset.Position(pos))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no library files checked")
	}
}

// exitCalls returns the positions of af's calls to os.Exit (os imported
// under its own name or another).
func exitCalls(af *ast.File) []token.Pos {
	osName := ""
	for _, imp := range af.Imports {
		if imp.Path.Value == `"os"` {
			osName = "os"
			if imp.Name != nil {
				osName = imp.Name.Name
			}
		}
	}
	if osName == "" {
		return nil
	}
	var lines []token.Pos
	ast.Inspect(af, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Exit" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == osName {
			lines = append(lines, call.Pos())
		}
		return true
	})
	return lines
}

// TestExitCallsCatches: the checker finds os.Exit under its own name and
// another, and nothing else.
func TestExitCallsCatches(t *testing.T) {
	for src, want := range map[string]int{
		"package p\nimport \"os\"\nfunc f() { os.Exit(3) }\n":                                                              1,
		"package p\nimport sys \"os\"\nfunc f() { sys.Exit(1); sys.Exit(2) }\n":                                            2,
		"package p\nimport \"os\"\ntype x struct{}\nfunc (x) Exit(int) {}\nfunc f() { var o x; o.Exit(1); _ = os.Args }\n": 0,
		"package p\nfunc f() {}\n": 0,
	} {
		af, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(exitCalls(af)); got != want {
			t.Errorf("%q: %d calls found, want %d", src, got, want)
		}
	}
}
