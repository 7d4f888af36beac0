// Package deptest holds the repository-wide dependency-direction and package-doc tests.
//
// It has no code of its own: its tests run `go list` over the module and
// fail when an import crosses the layers of ARCHITECTURE.md's "Layers"
// (each failure names the rule and the reason for it), or when a package
// lacks its one doc comment or has two; and they fail when ARCHITECTURE.md
// names a package or Go name that does not exist (architecture_test.go).
package deptest
