package main

import (
	"os"

	"github.com/omnictx/omni/redact"
)

// redactLocal redacts a text that reaches the agent without passing the
// Engine (no reader, invalid UTF-8): the redaction stage still runs, in
// this process, unless the user asked to keep secrets (--keep-secrets,
// OMNI_KEEP_SECRETS=1). A panic inside redaction leaves the raw text
// (fail open for the reader: nothing is recorded here). command is the
// command line that printed text ("" when unknown): a command whose name
// says it prints a credential has its bare tokens masked (redact.Output).
func redactLocal(text, command string, keep bool) (out string) {
	if keep || os.Getenv("OMNI_KEEP_SECRETS") == "1" || text == "" {
		return text
	}
	defer func() {
		if recover() != nil {
			out = text
		}
	}()
	out, _ = redact.Output(command, text)
	return out
}
