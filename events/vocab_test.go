package events

import "testing"

// TestVocabularyIsTheLogsWords pins every persisted word to the bytes logs
// already hold: a constant whose value changed would make older logs read
// as if they lacked the parameter or the reason. The right-hand strings are
// copied from logs written before the constants existed; never edit one.
func TestVocabularyIsTheLogsWords(t *testing.T) {
	params := []struct {
		got  Param
		want string
	}{
		{ParamCommand, "command"},
		{ParamExitCode, "exit_code"},
		{ParamHost, "host"},
		{ParamEnvPassthrough, "env_passthrough"},
		{ParamNoFold, "nofold"},
		{ParamLedgerOnly, "ledger_only"},
		{ParamFoldFloor, "fold_floor"},
		{ParamKeepSecrets, "keep_secrets"},
		{ParamRedacted, "redacted"},
		{ParamRedactedTotal, "redacted_total"},
		{ParamRedactedGrew, "redacted_grew"},
		{ParamHostExitCode, "host_exit_code"},
		{ParamHostFrame, "host_frame"},
		{ParamPersisted, "persisted"},
		{ParamTTY, "tty"},
		{ParamInput, "input"},
		{ParamOriginPrefix, "origin."},
	}
	for _, c := range params {
		if string(c.got) != c.want {
			t.Errorf("param %q: the log holds %q", c.got, c.want)
		}
	}
	reasons := []struct {
		got  Reason
		want string
	}{
		{ReasonHostCap, "host-cap"},
		{ReasonHostCapReply, "host-cap:reply"},
		{ReasonArchiveFailed, "archive-failed"},
		{ReasonPassthrough, "passthrough"},
		{ReasonOwnRecovery, "own-recovery"},
		{ReasonLossyJSON, "lossy-json"},
		{ReasonFailed, "failed"},
		{ReasonFloor, "floor:128"},
		{ReasonStructuredPrefix, "structured:"},
		{ReasonNoRun, "no-run"},
	}
	for _, c := range reasons {
		if string(c.got) != c.want {
			t.Errorf("reason %q: the log holds %q", c.got, c.want)
		}
	}
	for got, want := range map[string]string{InputWithheld: "withheld", InputWithheldSecrets: "withheld:secrets", InputForgotten: "withheld:forgotten"} {
		if got != want {
			t.Errorf("input value %q: the log holds %q", got, want)
		}
	}
}
