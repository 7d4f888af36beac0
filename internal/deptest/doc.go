// Package deptest holds the repository-wide dependency-direction and package-doc tests.
//
// It has no code of its own: its tests run `go list` over the module and
// fail when an import crosses the layers of STYLE.md §4 (each failure names
// the rule and the reason for it), or when a package lacks its one doc
// comment (STYLE.md §2 rule 6).
package deptest
