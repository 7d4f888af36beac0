package main

// omni version and omni help environment: what a user reaches for first.

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon/wire"
)

// buildInfo is what `omni version --json` prints.
type buildInfo struct {
	Version string `json:"version"`
	// Build is the build identity daemons and clients compare
	// (wire.BuildID): "rev:<VCS revision>" for a clean checkout, else
	// "exe:<SHA-256 prefix of the executable>" (built with
	// -buildvcs=false, as CI does, or from a modified tree).
	Build     string `json:"build"`
	Protocol  int    `json:"protocol"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
	Module    string `json:"module,omitempty"`
	// Revision, Time and Modified come from the VCS stamp Go writes into
	// the binary (absent when built with -buildvcs=false or outside git).
	Revision string `json:"vcs_revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	Modified bool   `json:"vcs_modified,omitempty"`
	// Commit is the commit a release build was made from (-ldflags -X
	// main.commit=...; tools/release stamps it with the tag in Version).
	Commit string `json:"commit,omitempty"`
}

// readBuildInfo gathers the binary's own build information.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Build: wire.BuildID(), Protocol: wire.Protocol, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.Module = bi.Main.Path
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	return b
}

func newVersionCmd(s streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print omni's version and build information",
		Long: `Prints omni's version, the daemon protocol version it speaks, the Go
release and platform it was built with, and the source revision when the
build recorded one (go build stamps it inside a git checkout), and the build
identity: the revision of a clean checkout ("rev:..."), else a hash of the
executable ("exe:..."). A daemon of another build is replaced at the next
call, and 'omni doctor' reports one.

Exit codes: 0 always.`,
		Example: `  omni version
  omni version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuildInfo()
			if asJSON {
				return writeJSON(s.Out, b)
			}
			fmt.Fprintf(s.Out, "omni %s (daemon protocol %d, %s, %s)\nbuild %s\n", b.Version, b.Protocol, b.GoVersion, b.Platform, b.Build)
			if b.Commit != "" {
				fmt.Fprintf(s.Out, "commit %s\n", b.Commit)
			}
			if b.Revision != "" {
				dirty := ""
				if b.Modified {
					dirty = ", modified"
				}
				fmt.Fprintf(s.Out, "revision %s (%s%s)\n", b.Revision, b.Time, dirty)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}

// environmentHelp lists every environment variable omni, omni-hook and the
// OpenCode plugin read (TestEnvironmentHelpComplete checks it against the
// source).
const environmentHelp = `Environment variables omni reads:

  OMNI_HOME             where omni keeps its state (default ~/.omni): the
                        event store, daemon.addr, omni.log, daemon.log; an
                        absolute path (a relative one is refused)
  OMNI_RETENTION        how long the daemon keeps batches: days (30d, the
                        default: the ledger's window) or a duration
                        (2160h); 0 keeps everything. Older batches go at
                        most once a day, as 'omni gc --before' removes them
  OMNI_SESSION          the reader's session id for 'omni exec', pipe mode,
                        'omni goal' (when --session is not given) and the
                        MCP tool omni_run
  OMNI_PASSTHROUGH      any value: hooks and 'omni exec' deliver every
                        output unchanged (still recorded)
  OMNI_KEEP_SECRETS     "1": credentials are not redacted and inputs that
                        hold them are stored with their text
  OMNI_QUIET            any value: 'omni exec' prints no savings footer
  OMNI_NO_DAEMON        any value: every command opens the store itself
                        (under its lock) instead of asking the daemon
  OMNI_TOKENIZER        the encoding the daemon counts tokens with for
                        'omni stats': o200k (default), cl100k, or none; under
                        OMNI_NO_DAEMON tokens are counted only when it is set
  OMNI_DAEMON_IDLE      the daemon's idle exit (a duration such as 10m) when
                        'omni daemon' is started without --idle
  OMNI_DAEMON_REPLACE   "1": set by a hook in the daemon it starts after the
                        running one took a whole deadline or refused its
                        token: the new daemon stops that one by its pid
                        (when it holds this home's store lock) and takes over
  OMNI_MCP_TOOLS        tools 'omni mcp' advertises beside omni_retrieve and
                        omni_explain_savings: "omni_run", "omni_stats"
                        (comma-separated) or "all"
  CLAUDE_CODE_SESSION_ID  set by Claude Code for the MCP servers it starts:
                        the reader of omni_run when OMNI_SESSION is unset
  OMNI_PRETOOL_REWRITE  "0": 'omni pretool' rewrites nothing (turns off
                        'omni init --claude --rewrite' without editing files)
  BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS  Claude Code's Bash timeouts, read
                        by 'omni pretool' as the host reads them: the rewrite's
                        filter passes its output through before the timeout
  CLAUDE_CONFIG_DIR, CLAUDE_PROJECT_DIR  where 'omni pretool' reads Claude
                        Code's settings (default ~/.claude, the payload's cwd)
  CLAUDE_CODE_GIT_BASH_PATH  Windows: the Git Bash 'omni exec' and omni_run
                        run a one-string command with, as Claude Code does
                        (else bash on PATH or beside git.exe, never WSL's;
                        else PowerShell, else cmd.exe)
  OMNI_REPORT_RSS       any value: hooks write their peak memory to stderr
  OMNI_REPORT_STAGES    any value: omni-hook writes the time of each stage
                        of its call to stderr (what 'omni bench --latency'
                        prints)
  GOMEMLIMIT            when set, the daemon keeps Go's limit instead of its
                        own soft memory limit
  CURSOR_VERSION        set by Cursor in every hook process: a Cursor payload
                        reaching omni's Claude Code hooks (Cursor runs
                        ~/.claude/settings.json's hooks too) is answered with
                        nothing; 'omni init --cursor' registers its own
  CODEX_HOME            Codex's config directory for 'omni init --codex'
                        (default ~/.codex)
  COPILOT_HOME          Copilot CLI's config directory for 'omni init --copilot'
                        (default ~/.copilot)
  CLINE_DIR             Cline's config directory for 'omni init --cline'
                        (default ~/.cline)
  XDG_CONFIG_HOME       where 'omni init --opencode' and '--kilo' write the
                        plugin (default ~/.config)
  NO_COLOR              any value: 'omni diff' prints no colour

A team on one NATS JetStream cluster (README, "A team on one NATS cluster").
'omni init --nats-url URL [--nats-creds F] [--nats-ca F] ...' records these
settings in $OMNI_HOME/cluster.json, which every daemon of the home reads,
whatever environment a host starts the hook in. When OMNI_NATS_URL is set
in a process's environment (even empty: the embedded store), the variables
below are the settings and the file is not read. A daemon running on
another backend than the settings name is replaced at the next hook.

  OMNI_NATS_URL         server URLs, comma-separated: the log is a stream on
                        that cluster, shared with every machine pointed at
                        it, instead of the embedded store (set empty: the
                        embedded store, whatever cluster.json says)
  OMNI_NATS_CREDS       a NATS .creds file (user JWT and nkey seed)
  OMNI_NATS_CA          PEM file of the CAs that sign the servers' certificates
  OMNI_NATS_CERT        client TLS certificate (PEM), with OMNI_NATS_KEY
  OMNI_NATS_KEY         client TLS key (PEM), with OMNI_NATS_CERT
  OMNI_NATS_STREAM      the stream's name (default EVENTS), the same on
                        every machine of the team
  OMNI_NATS_REPLICAS    replicas of a stream omni creates, 1 to 5 (default
                        3 on a cluster of three or more servers, else 1)
  USER                  the user events record when the account database
                        names none ('omni stats --by user')

Read by the plugins 'omni init --opencode' and 'omni init --cline' write:

  OMNI_BIN              the omni binary to run (default: the one init ran)
  OMNI_HOOK_TIMEOUT_MS  how long the plugin waits for omni (default 5000 for
                        OpenCode, 2500 for Cline)

Test helpers only: OMNI_CHROMIUM (the dashboard's browser test),
OMNI_DAEMON_HELPER (the daemon tests), OMNI_E2E_CLIS (where e2e/install.sh
put the agent CLIs), OMNI_TEAM_FIGURES and OMNI_TEAM_FIGURES_LIMIT (the team
figures on the shared corpus).`

// newEnvironmentTopic is the help topic 'omni help environment'.
func newEnvironmentTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "environment",
		Short: "Environment variables omni reads",
		Long:  environmentHelp,
	}
}

// fullVersion is the version with its build, as --version and doctor
// print it ("0.1.0-dev+rev:0123abcd…"): two builds never share it.
var fullVersion = func() string { return version + "+" + wire.BuildID() }
