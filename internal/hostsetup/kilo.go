package hostsetup

// Kilo Code (npm @kilocode/cli 7.7.7, docs/HOSTS.md "Kilo Code 7.7.7"): an
// OpenCode fork whose plugins load from $XDG_CONFIG_HOME/kilo/plugins/
// (project: .kilo/plugins/) and whose tool.execute.after works as
// OpenCode's, so omni writes its OpenCode plugin shim there, unchanged;
// the events it sends are recorded under the host opencode. omni registers
// no MCP server with Kilo.

import "path/filepath"

// Kilo is Kilo Code's CLI.
const Kilo Host = "kilo"

func init() {
	AllHosts = append(AllHosts, Kilo)
	hostNames[Kilo] = "Kilo Code"
	hostTiers[Kilo] = "Plugin"
	specs[Kilo] = hostSpec{
		dirs: func(o Options) []string { return []string{kiloDir(o)} },
		paths: func(o Options) (string, string) {
			return filepath.Join(kiloDir(o), "plugins", "omni.js"), ""
		},
		hooks: func(o Options, path string) []part {
			omni := o.Omni
			return []part{{"plugin", path, func(src []byte, exists, install bool) ([]byte, bool, error) {
				return applyPlugin(src, exists, install, omni, path)
			}}}
		},
		notes: func(o Options) []string {
			if o.MCPOnly {
				return nil
			}
			return []string{"Kilo Code loads the plugin (omni's OpenCode shim) at start; omni registers no MCP server with it",
				"with a plugin, Kilo Code 7.7.7 first installs @kilocode/plugin from npm into its config directory, a version never published: where the registry does not answer, its start waits minutes; a node_modules directory with a package.json and package-lock.json naming that dependency there skips the install (docs/HOSTS.md)"}
		},
	}
}

// kiloDir is $XDG_CONFIG_HOME/kilo (default ~/.config/kilo), or the
// project's .kilo.
func kiloDir(o Options) string {
	if o.Project != "" {
		return filepath.Join(o.Project, ".kilo")
	}
	return filepath.Join(o.ConfigHome, "kilo")
}
