package hostsetup

// GitHub Copilot in a repository: omni init --copilot --project writes
// .github/hooks/omni.json, the hooks file the Copilot CLI and the Copilot
// cloud agent both read from a repository ({"version": 1, "hooks":
// {"postToolUse": [...], "preCompact": [...]}}, the same command hooks as
// the user's settings.json), so a team commits it. The command is the bare
// `omni hook`, found on the PATH of whoever runs the agent (a teammate's
// machine, or the cloud agent's environment once its setup steps install
// omni): an absolute path from one machine means nothing on another.

import "path/filepath"

// copilotProjectHooks is the repository's hooks file.
func copilotProjectHooks(project string) string {
	return filepath.Join(project, ".github", "hooks", "omni.json")
}

// copilotProjectPart is the part that file holds.
func copilotProjectPart(path string) part {
	var hs []flatHook
	for _, e := range copilotEvents {
		hs = append(hs, flatHook{e.name, omap{{"type", "command"}, {"bash", "omni hook"}, {"timeoutSec", e.timeout}}})
	}
	return part{"hooks", path, jsonApply(func(src []byte, install bool) ([]byte, error) {
		return applyFlatHooks(src, hs, "bash", omap{{"version", 1}}, "", install)
	})}
}
