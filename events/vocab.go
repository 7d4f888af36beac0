package events

// The log's vocabulary: the words a writer puts into Invoked.Params and
// Emitted.Reason and a reader (rerun, diff, verify, bench, the stats)
// looks for. They are persisted, so they are part of the log's format as
// much as the event kinds: a value never changes once written (a renamed
// word would make every older log read as if it lacked it). The writers
// and readers name them only through these constants.

// Param is a key of Invoked.Params. Invoked.Params stays a
// map[string]string (the encoded form is a JSON object), so a key is used
// as string(ParamX).
type Param string

// The keys of Invoked.Params. A flag's value is "1" when set; an absent
// key means unset (the map holds no "0" for a flag).
const (
	// ParamCommand: the command line of an exec or pipe call (door exec,
	// pipe), as the agent or user typed it.
	ParamCommand Param = "command"
	// ParamExitCode: the exit status of an exec or pipe call, decimal;
	// "-1" when the door could not know it (a filter behind a pipe).
	ParamExitCode Param = "exit_code"
	// ParamHost: the host whose rewrite sent an exec or pipe call (omni
	// exec --host claude-code under the PreToolUse rewrite): the host's
	// own cut then applies to what is shown.
	ParamHost Param = "host"
	// ParamEnvPassthrough ("1"): OMNI_PASSTHROUGH was set for the call, so
	// its output was delivered unchanged.
	ParamEnvPassthrough Param = "env_passthrough"
	// ParamNoFold: why the output was delivered unfolded although the
	// decision could have folded it (a Reason, e.g. ReasonArchiveFailed).
	ParamNoFold Param = "nofold"
	// ParamLedgerOnly ("1"): the guard and the ledger only (omni bench
	// --ledger-only, Options.LedgerOnly in hooks).
	ParamLedgerOnly Param = "ledger_only"
	// ParamFoldFloor: the fold floor in bytes, decimal, when it is not the
	// ledger's own (omni bench --fold-floor).
	ParamFoldFloor Param = "fold_floor"
	// ParamKeepSecrets ("1"): the input was recorded unredacted because the
	// user asked (--keep-secrets, OMNI_KEEP_SECRETS=1).
	ParamKeepSecrets Param = "keep_secrets"
	// ParamRedacted: the number of credential values replaced in the text
	// the model reads (a hook's tool_response, an exec or pipe output),
	// decimal (the stored input is the redacted one, so a rerun,
	// which finds nothing left to redact, takes the count from here).
	ParamRedacted Param = "redacted"
	// ParamRedactedTotal: the number of credential values replaced anywhere
	// in the input (tool_input and the output), decimal.
	ParamRedactedTotal Param = "redacted_total"
	// ParamRedactedGrew ("1"): the masks made the input longer than it
	// arrived.
	ParamRedactedGrew Param = "redacted_grew"
	// ParamHostExitCode: an exit code read outside the host's payload (a
	// Codex call's, from its transcript), decimal or "unknown", so a rerun
	// decides with the same code without reading the file again.
	ParamHostExitCode Param = "host_exit_code"
	// ParamHostFrame ("1"): the host's frame was split from the text the
	// ledger decided on; a call recorded without it is decided again with
	// the frame inside the text, as it was then.
	ParamHostFrame Param = "host_frame"
	// ParamPersisted ("1"): a Bash call whose output the host persisted to
	// a file because it reached its inline cap (Claude Code: 30,000
	// characters, measured on Claude Code 2.1.328; the model sees a ~2 KB
	// preview and the path, and opens the file when it needs more): omni
	// read the whole output back and its raw bytes are that whole output,
	// the text the model would otherwise have read, not the preview.
	ParamPersisted Param = "persisted"
	// ParamTTY: "1" when an exec or pipe call ran on a terminal, "0" when
	// it did not; absent in logs that did not record it. The stats keep
	// terminal rows apart from agent rows by it.
	ParamTTY Param = "tty"
	// ParamInput: set when the raw input is not in the log; its value
	// starts with InputWithheld (InputWithheldSecrets, InputForgotten).
	ParamInput Param = "input"
	// ParamOriginPrefix starts the keys that say where an input came from
	// ("origin.seq", "origin.tool", ...: omni bench records the corpus
	// call). The decision never reads them; a rerun records them again.
	ParamOriginPrefix Param = "origin."
)

// The values of ParamInput.
const (
	// InputWithheld prefixes every ParamInput value: the input is not
	// stored, so the invocation cannot be rerun.
	InputWithheld = "withheld"
	// InputWithheldSecrets: the input held credentials (written by older
	// builds, which withheld instead of redacting).
	InputWithheldSecrets = "withheld:secrets"
	// InputForgotten: omni forget erased the input.
	InputForgotten = "withheld:forgotten"
)

// Reason is a value of Emitted.Reason: why a delivery left the text as it
// arrived ("" when something changed). Emitted.Reason stays a string, so a
// reason is used as string(ReasonX).
type Reason string

// The reasons omni writes. The ledger's own (ReasonFailed, ReasonFloor,
// ReasonStructuredPrefix, ReasonNoRun) come from pipeline.Decide, which
// declares them beside its rules; a test keeps both spellings equal.
const (
	// ReasonHostCap: the host cut and persisted the output (Claude Code's
	// 30,000-character stdout cap); the model saw a preview, so nothing
	// folds and nothing is recorded as shown.
	ReasonHostCap Reason = "host-cap"
	// ReasonHostCapReply: the output is shown whole, but a rewrite of it
	// would still reach the host's cap, which the host would persist and
	// show as a preview: it is delivered unchanged (and recorded).
	ReasonHostCapReply Reason = "host-cap:reply"
	// ReasonArchiveFailed: the archive could not be written, so nothing
	// was cut (no marker without a handle whose bytes can come back).
	ReasonArchiveFailed Reason = "archive-failed"
	// ReasonPassthrough: the user opted out (OMNI_PASSTHROUGH).
	ReasonPassthrough Reason = "passthrough"
	// ReasonOwnRecovery: the output of omni retrieve or omni diff, which is
	// the answer and never folds.
	ReasonOwnRecovery Reason = "own-recovery"
	// ReasonLossyJSON: the host's JSON held text the decoder could not
	// carry exactly (lone surrogate escapes), so it passes unchanged.
	ReasonLossyJSON Reason = "lossy-json"
	// ReasonFailed: a failing run the reader reads as the host shows it
	// (the ledger does not fold it).
	ReasonFailed Reason = "failed"
	// ReasonFloor: the text is under the ledger's fold floor of 128 bytes,
	// so no run can clear it.
	ReasonFloor Reason = "floor:128"
	// ReasonStructuredPrefix is followed by the kind of a structured or
	// opaque payload (pipeline.Kind: "structured:json", ...), which passes
	// byte for byte.
	ReasonStructuredPrefix Reason = "structured:"
	// ReasonNoRun: nothing repeated, or no run of repeated lines cleared
	// its bar.
	ReasonNoRun Reason = "no-run"
)
