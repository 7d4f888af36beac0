package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// version is set at build time with -ldflags "-X main.version=..."
// (tools/release: the tag), commit with "-X main.commit=..." (the commit
// the release was built from; "" otherwise).
var (
	version = "0.1.0-dev"
	commit  = ""
)

// streams are the process's standard streams, passed as values so tests can
// use buffers.
type streams struct {
	In       io.Reader
	Out, Err io.Writer
	// InIsTerminal reports whether In is a terminal (no pipe mode then).
	InIsTerminal bool
	// ErrIsTerminal reports whether Err is a terminal: only then do
	// commands whose stdout is data (retrieve) write a frame to stderr.
	ErrIsTerminal bool
}

func stdStreams() streams {
	return streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, InIsTerminal: term.IsTerminal(int(os.Stdin.Fd())),
		ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd()))}
}

// childExit is the exit status of the command `omni exec` ran (128+N when
// signal N ended it), passed through as omni's own; it prints nothing.
type childExit struct{ code int }

func (e childExit) Error() string { return "exit status " + strconv.Itoa(e.code) }

// cliError is what a command returns for a failure: the message printed on
// stderr and the cause exitCode chooses the exit code from.
type cliError struct {
	msg   string
	cause error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.cause }

// Causes of the exit codes that no lower package names.
var (
	// errUsage: a bad flag or argument (exit 2).
	errUsage = errors.New("usage")
	// errNotFound: a handle, sequence or invocation that is not there, or a
	// record that could not be rerun (exit 1).
	errNotFound = errors.New("not found")
	// errProblems: the command ran and reports a failure of what it
	// checks or sets up: doctor's problems, a replay that differs, a host
	// file init could not write, the MCP transport (exit 1).
	errProblems = errors.New("problems found")
	// errNotRunnable: the command omni exec was given could not be started
	// (exit 127, as a shell reports it).
	errNotRunnable = errors.New("command not runnable")
	// errInterrupted: stopped by SIGINT or SIGTERM (exit 130).
	errInterrupted = errors.New("interrupted")
)

// usageErr is a bad flag or argument: exit 2 with the message.
func usageErr(format string, a ...any) error {
	return &cliError{msg: fmt.Sprintf(format, a...), cause: errUsage}
}

// failErr is a failure of cause with the message msg.
func failErr(cause error, msg string) error { return &cliError{msg: msg, cause: cause} }

// exitCode maps a command's error to the process exit code; with run, the
// only place that does. 1: a handle, sequence or fold that is not there
// (or unreadable, or malformed), a replay that differs, problems found;
// 2: usage, store and every other error; 127: omni exec's command could
// not start; 130: interrupted; omni exec's child's own status.
func exitCode(err error) int {
	var ce childExit
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ce):
		return ce.code
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errNotRunnable):
		return 127
	case errors.Is(err, errInterrupted):
		return 130
	case errors.Is(err, errNotFound), errors.Is(err, errProblems),
		errors.Is(err, daemon.ErrUnknownHandle), errors.Is(err, daemon.ErrDamaged),
		errors.Is(err, daemon.ErrBadHandle), errors.Is(err, daemon.ErrReservedHandle),
		errors.Is(err, daemon.ErrNoDelivery), errors.Is(err, daemon.ErrWithheld), errors.Is(err, daemon.ErrNoFold),
		errors.Is(err, daemon.ErrNotInLog):
		return 1
	}
	return 2
}

// omniHome returns $OMNI_HOME, else ~/.omni, as an absolute path.
func omniHome() string { return wire.Home() }

// errRelativeHome: OMNI_HOME is a relative path. Read against each
// process's working directory it would name another home in every
// directory (a host runs hooks in the project's), so commands refuse it
// and hooks pass output through.
var errRelativeHome = errors.New("OMNI_HOME is a relative path")

// pinHome resolves the home once, at entry. A relative OMNI_HOME is
// refused (errRelativeHome, with a message that names the absolute path
// it would be here); the ./.omni default when HOME is unset becomes
// absolute in the environment, so the daemon this process starts, and
// every later lookup, name the same directory whatever their working
// directory.
func pinHome() error {
	h := os.Getenv("OMNI_HOME")
	if h != "" && !filepath.IsAbs(h) {
		return fmt.Errorf("%w: OMNI_HOME=%s would name a different home in every directory omni runs in (here %s; a host runs hooks in each project's directory). Set an absolute path, e.g. export OMNI_HOME=%s", errRelativeHome, h, wire.Home(), wire.Home())
	}
	if _, err := os.UserHomeDir(); h == "" && err != nil {
		os.Setenv("OMNI_HOME", wire.Home())
	}
	return nil
}

// requireHome returns an error naming home when it does not exist: a
// read-only command (stats, retrieve) reports it instead of creating an
// empty store there.
func requireHome(cmd, home string) error {
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		return failErr(fs.ErrNotExist, fmt.Sprintf("omni %s: no omni home at %s (set OMNI_HOME, or run a hook there first): nothing was recorded there", cmd, home))
	}
	return nil
}

// run executes one omni command line and returns the process exit code.
// It is the only place errors become exit codes.
func run(args []string, s streams) int {
	if err := pinHome(); err != nil {
		if len(args) > 0 && (args[0] == "hook" || args[0] == "pretool") {
			return 0 // the host keeps its output; there is no home to log to
		}
		fmt.Fprintln(s.Err, "omni:", err)
		return 2
	}
	root := newRootCmd(s)
	root.SetArgs(args)
	failed, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	if len(args) > 0 && (args[0] == "hook" || args[0] == "pretool") {
		// A host hook never fails the host: exit 2 would block the tool call
		// and feed stderr to the model (Claude Code treats exit 2 of a
		// hook as a blocking error). Log and exit 0.
		homeLogf(omniHome())("%s: %v", args[0], err)
		return 0
	}
	var ee childExit
	var ce *cliError
	switch {
	case errors.As(err, &ee):
	case errors.As(err, &ce):
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(s.Err, msg)
		}
	default:
		// cobra's own errors (argument counts, unknown subcommands) name
		// the command that refused them.
		name := "omni"
		if failed != nil {
			name = failed.CommandPath()
		}
		fmt.Fprintf(s.Err, "%s: %v\n", name, err)
	}
	return exitCode(err)
}

func newRootCmd(s streams) *cobra.Command {
	var pipeSession, pipeAgent string
	var pipeKeepSecrets bool
	root := &cobra.Command{
		Use:   "omni",
		Short: "Shorten what an AI coding agent reads, never guess, lose nothing",
		Long: `omni sits between an AI coding agent and the output of its tools. A run of
lines a reader was already shown becomes one marker with a 16-hex handle;
'omni retrieve <handle>' prints the original bytes exactly. Every decision is
an event in an embedded NATS JetStream log under $OMNI_HOME (default ~/.omni).

Pipe mode: 'CMD | omni --session S' prints CMD's output as the reader S
would read it.

Exit codes: 0 success; 1 a handle or sequence was not found or is malformed, or a replay
differed; 2 usage or store errors.`,
		Example: `  omni bench --corpus corpus/*.jsonl
  omni exec --session demo -- go test ./...
  git log | omni --session demo
  omni retrieve 0123456789abcdef`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if s.InIsTerminal {
				return cmd.Help()
			}
			return runPipe(cmd.Context(), s, pipeSession, pipeAgent, pipeKeepSecrets)
		},
	}
	root.Flags().StringVar(&pipeSession, "session", os.Getenv("OMNI_SESSION"), "pipe mode: the reader's session id (default $OMNI_SESSION)")
	root.Flags().StringVar(&pipeAgent, "agent", "", "pipe mode: the reader's agent id within the session")
	root.Flags().BoolVar(&pipeKeepSecrets, "keep-secrets", false, "pipe mode: do not redact credentials, and keep the raw output in the log")
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.AddCommand(newHookCmd(s), newExecCmd(s), newRetrieveCmd(s), newReplayCmd(s), newBenchCmd(s), newDaemonCmd(daemon.ServiceHandler), newDistillCmd(s), newGCCmd(s),
		newInitCmd(s), newDoctorCmd(s), newMCPCmd(s), newPretoolCmd(s), newPipeCmd(s),
		newStatsCmd(s), newDiffCmd(s), newExplainCmd(s), newDashboardCmd(s), newGoalCmd(s), newRememberCmd(s), newSessionCmd(s), newLogCmd(s), newForgetCmd(s))
	root.AddCommand(newVersionCmd(s), newEnvironmentTopic())
	// --version prints the build too; computed only when asked (it may
	// hash the executable).
	cobra.AddTemplateFunc("omniVersion", fullVersion)
	root.SetVersionTemplate("omni version {{omniVersion}}\n")
	return root
}

// errMsg renders an error for the user: a daemon handler's error without
// the transport's "v2.method: remote: " prefix (daemon.Message).
func errMsg(err error) string { return daemon.Message(err) }

// writeJSON prints v as one line of JSON (the daemon's reply as it crossed
// the wire) and a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
