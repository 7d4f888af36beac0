package hostsetup

import "path/filepath"

// Cline CLI (measured on 3.0.65, docs/HOSTS.md "Cline CLI 3.0.65") loads
// plugins from <project>/.cline/plugins and from the plugins directory of
// its configuration directory ($CLINE_DIR, else ~/.cline): a module whose
// default export has hooks.afterTool, run in Cline's plugin sandbox (a node
// process). omni writes its plugin there as omni.js; it registers no MCP
// server with Cline.

// clineDir is Cline's configuration directory: o.ClineDir, else ~/.cline.
func clineDir(o Options) string {
	if o.ClineDir != "" {
		return o.ClineDir
	}
	return filepath.Join(o.Home, ".cline")
}
