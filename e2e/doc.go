// Package e2e proves omni inside the real agent CLIs: each test runs a
// pinned release of a host (Claude Code, Codex CLI, Gemini CLI, OpenCode,
// GitHub Copilot CLI, Cline CLI, Kilo Code, Factory Droid)
// in its non-interactive mode against a mock of the host's model API on
// loopback, with omni registered by its own `omni init --<host>` in a
// temporary HOME. The mock plays a fixed script of tool calls and records
// every request, so the tests assert on what the model actually read: the
// tool results in the next request.
//
// The CLIs are installed by e2e/install.sh (called by .ci/run) into
// e2e/.clis, or into $OMNI_E2E_CLIS; a CLI that is not there makes its test
// skip with a message naming it. The package holds test code only, besides
// this comment.
package e2e
