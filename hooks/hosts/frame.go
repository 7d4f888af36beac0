package hosts

// Host framing: the lines a host writes around a tool's own output before
// the model reads it (Gemini CLI's "Output: " prefix and its status lines,
// Codex CLI's truncation header, Copilot CLI's and Cline CLI's exit lines).
// They are never content: the ledger never sees them, so they are never
// recorded as delivered, never folded, and never count as the line that
// keeps an output from being only markers when one of them is project
// scope. A reply puts them back around the decided text, byte for byte.

// hostFrame is a tool result taken apart: head and tail are the host's
// frame, body the tool's output the ledger decides on.
type hostFrame struct {
	head, body, tail string
}

// wrap puts the frame back around a decided body before reply renders it.
func (f hostFrame) wrap(reply func(string) ([]byte, error)) func(string) ([]byte, error) {
	return func(t string) ([]byte, error) { return reply(f.head + t + f.tail) }
}
