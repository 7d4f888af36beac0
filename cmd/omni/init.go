package main

// omni init: register omni with agent hosts (internal/hostsetup does the
// work; this file is the command line).

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/hostsetup"
)

const hostFlagHelp = `  --claude     Claude Code (~/.claude/settings.json, ~/.claude.json)
  --codex      Codex CLI ($CODEX_HOME/hooks.json, config.toml)
  --gemini     Gemini CLI (~/.gemini/settings.json)
  --opencode   OpenCode (~/.config/opencode/plugins/omni.js, opencode.json)
  --copilot    GitHub Copilot CLI ($COPILOT_HOME/settings.json, default ~/.copilot)
  --cline      Cline CLI (~/.cline/plugins/omni.js)
  --cursor     Cursor (~/.cursor/hooks.json, ~/.cursor/mcp.json)
  --droid      Factory Droid (~/.factory/mcp.json)
  --kilo       Kilo Code (~/.config/kilo/plugins/omni.js)
  --all        every host above`

func newInitCmd(s streams) *cobra.Command {
	var claude, codex, gemini, opencode, copilot, cline, cursor, droid, all, uninstall, hookOnly, mcpOnly, dry, project, rewrite, asJSON, embedded bool
	var kilo bool
	var bin string
	var cs daemon.ClusterSetup
	cmd := &cobra.Command{
		Use:   "init [--claude|--codex|--gemini|--opencode|--copilot|--cline|--cursor|--droid|--kilo|--all] [flags]",
		Short: "Register omni's hooks and MCP server with agent hosts",
		Long: `Writes omni's registration where each host reads it:

  Claude Code  hooks in ~/.claude/settings.json (--project: .claude/settings.json):
               PostToolUse (Bash|Read|Grep|Glob|WebFetch shortened; WebSearch,
               BashOutput, Task, Agent and MCP tools only lose credential
               values), PostToolUseFailure,
               PreCompact, PostCompact, SessionStart, SessionEnd, SubagentStart;
               MCP server in ~/.claude.json (--project: .mcp.json).
  Codex CLI    hooks in $CODEX_HOME/hooks.json (default ~/.codex; --project:
               .codex/hooks.json); MCP [mcp_servers.omni] in config.toml.
               Codex runs a new or changed hook only after you approve it:
               start codex and approve omni under "Hooks need review".
               Codex applies a replacement only as {"decision":"block",
               "reason":TEXT}: some versions show it as a blocked or failed call
               although the model reads the shortened text.
  Gemini CLI   hooks (AfterTool on Gemini's own tool names, SessionStart,
               SessionEnd; timeouts in milliseconds) and mcpServers in
               ~/.gemini/settings.json (--project: .gemini/). The reply is
               a deny whose reason the model reads in place of the output
               (framed as a failed call).
  OpenCode     a plugin shim, ~/.config/opencode/plugins/omni.js (--project:
               .opencode/plugins/), that runs 'omni hook' after each tool call
               and assigns the shortened text; MCP in opencode.json "mcp".
  Copilot CLI  postToolUse and preCompact command hooks in
               $COPILOT_HOME/settings.json (default ~/.copilot; --project:
               .github/hooks/omni.json, which the Copilot cloud agent reads
               too, running 'omni hook' from PATH); no MCP server.
  Cline CLI    a plugin, ~/.cline/plugins/omni.js ($CLINE_DIR; --project:
               .cline/plugins/), that runs 'omni hook' after each run_commands
               call and puts the shortened text in each command's result.
  Cursor       postToolUse (MCP tools only: Cursor cannot replace a Shell or
               Read output) and preCompact in ~/.cursor/hooks.json
               (--project: .cursor/hooks.json), running 'omni-hook cursor';
               MCP server in ~/.cursor/mcp.json (--project: .cursor/mcp.json).
               Cursor also runs ~/.claude/settings.json's hooks: omni's
               Claude Code hooks stay silent there.
  Droid        the MCP server with omni_run in ~/.factory/mcp.json (--project:
               .factory/mcp.json); no hook: Droid's PostToolUse cannot
               replace a tool's output. Droid names no session to MCP
               servers, so omni_run folds no repeat there, and it returns
               a long output whole where Droid's Execute keeps 60 lines.
  Kilo Code    the OpenCode plugin shim in ~/.config/kilo/plugins/omni.js
               ($XDG_CONFIG_HOME; --project: .kilo/plugins/); no MCP server.

Only omni's own entries are inserted or removed; other keys, hooks and the
file's formatting stay as they were. Omni's entries are recognised by program
(omni) and subcommand, so an older or duplicate registration is replaced,
never doubled. Before omni first changes a file it copies it to
FILE.omni-backup (once). Running init again with the same flags changes
nothing. --uninstall restores the original bytes when the file was not
changed since, else removes only omni's entries.

Without a host flag, init sets up the one host found on this machine (or,
with --uninstall, every host omni is registered with), and refuses when it
cannot tell.

For Claude Code init also registers 'omni pretool' for PreToolUse (the
default; --rewrite=false leaves it out): a foreground test or build run (go
test, pytest, cargo test, npm test, make, ...) in a strict grammar (plain or
quoted words, an optional 'cd DIR &&' or other simple commands before it;
no pipe, expansion or redirection) is rewritten as
'set -o pipefail; COMMAND 2>&1 | omni pipe ...': Claude Code's own shell
runs the command as written and its own permission check judges every part;
omni only reads the runner's output, so a failing run is distilled too
(Claude Code never lets a hook rewrite a failing call's output). The hook
never answers a permission decision. init adds two allow rules to
permissions.allow for the parts it adds, Bash(set -o pipefail) and
Bash(OMNI pipe:*) ('omni pipe' only reads its input and prints it); where
they would not apply (a deny or ask rule that could match them, managed
rules only) the command is left as written. Replayed on the shared corpus
this saves 20.0% instead of 17.0% ('omni bench --rewrite=off').

The backend: by default the log is the embedded store of $OMNI_HOME.
--nats-url (with --nats-creds, --nats-ca, --nats-cert/--nats-key,
--nats-stream, --nats-replicas as the cluster needs) checks that the
cluster answers with those settings and records them in
$OMNI_HOME/cluster.json, so every daemon of this home uses the cluster
whatever environment a host starts the hook in; --embedded removes them.
OMNI_NATS_URL set in a process's environment overrides the file ('omni
help environment'). A daemon running on another backend is replaced at
the next hook. Without a host flag, these flags change only the backend;
every init says which backend is in use.

Exit codes: 0 done (or nothing to do); 1 a file could not be read, parsed or
written, or the cluster did not answer with the settings given; 2 usage
error, or the host could not be told.`,
		Example: `  omni init --claude
  omni init --all --dry-run
  omni init --gemini --project --hook-only
  omni init --claude --uninstall
  omni init --nats-url nats://n1:4222,nats://n2:4222,nats://n3:4222 --nats-creds ~/.nats/omni.creds
  omni init --embedded`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hookOnly && mcpOnly {
				return usageErr("omni init: --hook-only and --mcp-only exclude each other")
			}
			natsURL, f := cmd.Flags().Changed("nats-url"), cmd.Flags()
			cs.Set, cs.DryRun = natsURL || embedded, dry
			if natsURL && embedded || !natsURL && slices.ContainsFunc([]string{"nats-creds", "nats-ca", "nats-cert", "nats-key", "nats-stream", "nats-replicas"}, f.Changed) {
				return usageErr("omni init: the --nats-* settings go with --nats-url, and --embedded without them")
			}
			if cs.Set { // the backend first: refused settings leave every file as it was
				if err := initCluster(s, cs, asJSON); err != nil || !(claude || codex || gemini || opencode || copilot || cline || cursor || droid || kilo || all || uninstall) {
					return err
				}
			}
			o, err := hostsetup.DefaultOptions()
			if err != nil {
				return failErr(errProblems, "omni init: "+err.Error())
			}
			if bin != "" {
				if b := filepath.Base(bin); b == hostsetup.HookBinaryName || strings.EqualFold(b, hostsetup.HookBinaryName+".exe") {
					return usageErr("omni init: --bin names the omni binary; omni-hook is registered for the hooks on its own when it sits beside it")
				}
				if o.Omni, err = filepath.Abs(bin); err != nil {
					return usageErr("omni init: --bin: %v", err)
				}
				if fi, err := os.Stat(o.Omni); !uninstall && (err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 && !strings.EqualFold(filepath.Ext(o.Omni), ".exe")) {
					// Registered all the same (a binary installed later, a
					// path on another machine); the host fails open until
					// it is there, and doctor reports it.
					fmt.Fprintf(s.Err, "omni init: warning: --bin %s is not an executable file yet: the hosts run nothing until it is\n", o.Omni)
				}
			}
			o.HookOnly, o.MCPOnly, o.Rewrite = hookOnly, mcpOnly, rewrite
			if project {
				wd, err := os.Getwd()
				if err != nil {
					return failErr(errProblems, "omni init: "+err.Error())
				}
				o.Project = projectOf(wd)
			}
			var hosts []hostsetup.Host
			sel := map[hostsetup.Host]bool{hostsetup.Claude: claude, hostsetup.Codex: codex, hostsetup.Gemini: gemini, hostsetup.OpenCode: opencode, hostsetup.Copilot: copilot, hostsetup.Cline: cline, hostsetup.Cursor: cursor, hostsetup.Droid: droid}
			sel[hostsetup.Kilo] = kilo
			for _, h := range hostsetup.AllHosts {
				if all || sel[h] {
					hosts = append(hosts, h)
				}
			}
			if len(hosts) == 0 {
				var found []hostsetup.Host
				for _, h := range hostsetup.AllHosts {
					if (uninstall && hostsetup.Registered(h, o)) || (!uninstall && hostsetup.Present(h, o)) {
						found = append(found, h)
					}
				}
				switch {
				case uninstall && len(found) == 0:
					fmt.Fprintln(s.Out, "omni is not registered with any host; nothing to do")
					return nil
				case uninstall, len(found) == 1:
					hosts = found
				default:
					var names []string
					for _, h := range found {
						names = append(names, h.Name())
					}
					why := "no host found"
					if len(found) > 1 {
						why = "found " + strings.Join(names, ", ")
					}
					return usageErr("omni init: cannot tell which host to set up (%s); pass one or more of:\n%s", why, hostFlagHelp)
				}
			}
			if rewrite && cmd.Flags().Changed("rewrite") && !slices.Contains(hosts, hostsetup.Claude) {
				return usageErr("omni init: --rewrite is for Claude Code only (add --claude)")
			}
			if err := hostsetup.Run(s.Out, hosts, o, !uninstall, dry, asJSON); err != nil {
				return failErr(errProblems, "omni init: "+err.Error())
			}
			if !cs.Set {
				return initCluster(s, cs, asJSON)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&claude, "claude", false, "set up Claude Code")
	f.BoolVar(&codex, "codex", false, "set up Codex CLI")
	f.BoolVar(&gemini, "gemini", false, "set up Gemini CLI")
	f.BoolVar(&opencode, "opencode", false, "set up OpenCode")
	f.BoolVar(&copilot, "copilot", false, "set up GitHub Copilot CLI")
	f.BoolVar(&cline, "cline", false, "set up Cline CLI")
	f.BoolVar(&cursor, "cursor", false, "set up Cursor (MCP tool outputs and compaction)")
	f.BoolVar(&droid, "droid", false, "set up Factory Droid")
	f.BoolVar(&kilo, "kilo", false, "set up Kilo Code")
	f.BoolVar(&all, "all", false, "set up every host")
	f.BoolVar(&uninstall, "uninstall", false, "remove omni's registration (restores the original bytes when nothing else changed)")
	f.BoolVar(&hookOnly, "hook-only", false, "hooks (or the OpenCode plugin) only, no MCP server")
	f.BoolVar(&mcpOnly, "mcp-only", false, "the MCP server only, no hooks")
	f.BoolVar(&dry, "dry-run", false, "print what would change and write nothing")
	f.BoolVar(&project, "project", false, "write the project's files (repository top level) instead of the user's")
	f.BoolVar(&rewrite, "rewrite", true, "Claude Code: pipe foreground test and build runs through 'omni pipe' (PreToolUse; the host still runs and judges the command) and allow the two added parts; --rewrite=false to leave it out")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	f.StringVar(&bin, "bin", "", "path of the omni binary the registration runs (default: this binary); an omni-hook beside it is registered for the hooks")
	f.StringVar(&cs.Settings.URL, "nats-url", "", "share the log on this NATS cluster (server URLs, comma-separated), recorded in $OMNI_HOME/cluster.json")
	f.StringVar(&cs.Settings.Creds, "nats-creds", "", "with --nats-url: a NATS .creds file (user JWT and nkey seed)")
	f.StringVar(&cs.Settings.CA, "nats-ca", "", "with --nats-url: PEM file of the CAs that sign the servers' TLS certificates")
	f.StringVar(&cs.Settings.Cert, "nats-cert", "", "with --nats-url: client TLS certificate (PEM), with --nats-key")
	f.StringVar(&cs.Settings.Key, "nats-key", "", "with --nats-url: client TLS key (PEM), with --nats-cert")
	f.StringVar(&cs.Settings.Stream, "nats-stream", "", "with --nats-url: the stream's name (default EVENTS), the same on every machine")
	f.IntVar(&cs.Settings.Replicas, "nats-replicas", 0, "with --nats-url: replicas of a stream omni creates, 1 to 5 (default 3 on three or more servers, else 1)")
	f.BoolVar(&embedded, "embedded", false, "remove the recorded cluster settings: the log is the embedded store again")
	return cmd
}

// initCluster records or reports the backend (daemon.SetupCluster); with
// --json it runs silently.
func initCluster(s streams, cs daemon.ClusterSetup, asJSON bool) error {
	w := s.Out
	if asJSON {
		w = io.Discard
	}
	if err := daemon.SetupCluster(context.Background(), w, omniHome(), cs, os.LookupEnv); err != nil {
		return failErr(errProblems, "omni init: "+err.Error())
	}
	return nil
}
