package hosts

// Factory Droid (read from its 0.225.2 binary; docs/HOSTS.md "Factory
// Droid"): its hook payloads take Claude Code's keys (session_id,
// transcript_path, cwd, permission_mode, hook_event_name, tool_name,
// tool_input, tool_response), its shell tool is "Execute", and its session
// transcripts live under ~/.factory/sessions. Its PostToolUse cannot
// replace a tool's output (a reply may stop the run, add a message the
// model reads besides the output, or warn the user): a Claude Code reply
// would be dropped while omni recorded a fold the model never got. So a
// Droid payload, told by its transcript path, is never answered on a tool
// event, and nothing of its output is recorded as shown; omni init
// --droid registers no hook (the PreToolUse rewrite of Execute commands
// waits for the rewrite's design common to every host).

import "strings"

// Droid is Factory Droid.
const Droid = "droid"

func init() {
	register(Protocol{Name: Droid,
		Rules: []Rule{{RankTranscript, func(s Signature) bool { return isDroidTranscript(s.TranscriptPath) }}},
		// Droid applies no replacement of a tool's output: nothing is
		// delivered, so nothing is recorded as shown.
		Deliver: func(*Payload, bool) (Delivery, bool) { return Delivery{}, false },
	})
}

// isDroidTranscript reports a transcript under a Factory home's sessions
// directory (~/.factory/sessions/…).
func isDroidTranscript(path string) bool {
	return strings.Contains(path, "/.factory/sessions/")
}
