// Package systest holds omni's system tests, which run the built binaries
// and the whole shared corpus rather than one package: hook storms against
// a home with no daemon, a kill loop that SIGKILLs the daemon while real
// calls replay, the 41 shared host scenarios, a hook failing open while the
// store is busy, and the corpus checks (the ledger-only and full-pipeline
// oracles, determinism, replay --verify, stats, explain and the dashboard
// against the bench's own totals), plus the corpus throughput benchmark.
//
// The package has no code of its own outside its tests. Its tests share
// one build of omni and omni-hook (internal/testbin) and two corpus passes,
// each run once per test process: the guard and the ledger only, and the
// whole pipeline (main_test.go). They read ../shared (corpus, scenarios)
// and skip with a message when it is absent, and under -short.
package systest
