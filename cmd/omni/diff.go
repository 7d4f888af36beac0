package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/linediff"
	"github.com/omnictx/omni/internal/statsreport"
)

type diffOptions struct {
	color   string
	context int
	asJSON  bool
}

func newDiffCmd(s streams) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff [SEQ]",
		Short: "Show what a tool produced beside what the model was given",
		Long: `Reruns one recorded invocation from the event log — the newest that
delivered text, or the one at sequence SEQ (as printed by omni replay,
omni explain or omni stats) — exactly as omni replay does, and prints a
unified diff from the raw text to the delivered one. Lines starting with -
never reached the model; lines starting with + are what replaced them.

Colour is used only on a terminal (--color auto, the default; NO_COLOR turns
it off). A header names the reader, tool, command and folds. If the rerun is
not byte-identical to what the log says was delivered, a note says so.

Exit codes: 0 printed; 1 SEQ holds no invocation that delivered text, or
its raw input is not in the log (it held credentials, or 'omni forget'
erased it; the message says which); 2 a bad argument, or the store could
not be read.`,
		Example: `  omni diff
  omni diff 42 --context 1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.context < 0 {
				return usageErr("omni diff: --context %d: want 0 or more lines", o.context)
			}
			var seq uint64
			if len(args) == 1 {
				var err error
				if seq, err = strconv.ParseUint(strings.TrimSpace(args[0]), 10, 64); err != nil || seq == 0 {
					return usageErr("omni diff: %q is not a sequence number", args[0])
				}
			}
			switch o.color {
			case "auto", "always", "never":
			default:
				return usageErr("omni diff: --color is auto, always or never")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			d, err := newClient().Diff(ctx, daemon.DiffRequest{Seq: events.Seq(seq)})
			if err != nil {
				return failErr(err, "omni diff: "+strings.TrimPrefix(errMsg(err), "diff: "))
			}
			if o.asJSON {
				return writeJSON(s.Out, d)
			}
			color := o.color == "always" || o.color == "auto" && isTerminal(s.Out) && os.Getenv("NO_COLOR") == ""
			renderDiff(s.Out, d, o.context, color)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.color, "color", "auto", "auto (on a terminal only), always or never")
	cmd.Flags().IntVar(&o.context, "context", 3, "unchanged lines shown around each change")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the raw and delivered texts as JSON")
	return cmd
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// renderDiff prints the header and the unified diff of d.
func renderDiff(w io.Writer, d hooks.DiffResult, ctxLines int, color bool) {
	what := d.Tool
	if d.Source != "" {
		what += ": " + statsreport.ClipName(d.Source, 80)
	}
	fmt.Fprintln(w, linediff.Paint(color, linediff.Bold, fmt.Sprintf("omni diff · seq %d · %s · %s · %s (%s)", d.Seq, d.Time, d.Reader, what, d.Door)))
	raw, del := linediff.SplitKeepEnds(d.Raw), linediff.SplitKeepEnds(d.Delivered)
	fmt.Fprintf(w, "raw %s B, %s lines → delivered %s B, %s lines", statsreport.Num(len(d.Raw)), statsreport.Num(len(raw)), statsreport.Num(len(d.Delivered)), statsreport.Num(len(del)))
	if len(d.Folds) > 0 {
		parts := make([]string, len(d.Folds))
		for i, f := range d.Folds {
			parts[i] = f.Marker + " " + f.Handle
		}
		fmt.Fprintf(w, "; %d fold(s): %s", len(d.Folds), strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	if !d.Match {
		fmt.Fprintln(w, "note: this rerun is not byte-identical to what the log says was delivered (omni replay --at", d.Seq, "shows more)")
	}
	if d.Raw == d.Delivered {
		reason := d.Reason
		if reason == "" {
			reason = "nothing folded"
		}
		fmt.Fprintf(w, "delivered unchanged (%s)\n", reason)
		return
	}
	fmt.Fprintln(w, linediff.Paint(color, linediff.Red, "--- raw"))
	fmt.Fprintln(w, linediff.Paint(color, linediff.Green, "+++ delivered"))
	linediff.Write(w, raw, del, ctxLines, color)
}
