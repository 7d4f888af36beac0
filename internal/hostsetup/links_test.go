package hostsetup

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkOptions returns Options for a fresh home and, with project, a fresh
// repository under it.
func linkOptions(t *testing.T, project bool) Options {
	t.Helper()
	home := t.TempDir()
	o := Options{Omni: "/usr/local/bin/omni", Home: home, ConfigHome: filepath.Join(home, ".config"),
		CodexHome: filepath.Join(home, ".codex")}
	if project {
		o.Project = filepath.Join(t.TempDir(), "repo")
		if err := os.MkdirAll(filepath.Join(o.Project, ".claude"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// TestBackupNeverThroughALink: a repository's dangling link at the backup
// path (pointing at a file of the user's) makes init refuse; the link's
// target is not created, in project scope or user scope.
func TestBackupNeverThroughALink(t *testing.T) {
	for _, project := range []bool{true, false} {
		o := linkOptions(t, project)
		dir := filepath.Join(o.Home, ".claude")
		if project {
			dir = filepath.Join(o.Project, ".claude")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		settings := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(settings, []byte("{/* touch ~/pwned */ \"model\": \"x\"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(o.Home, ".bash_aliases")
		if err := os.Symlink(target, settings+BackupSuffix); err != nil {
			t.Fatal(err)
		}
		err := Run(io.Discard, []Host{Claude}, o, true, false, false)
		if err == nil {
			t.Errorf("project=%v: init wrote its backup through a link", project)
		}
		if _, serr := os.Lstat(target); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("project=%v: the link's target %s was created", project, target)
		}
		if b, _ := os.ReadFile(settings); strings.Contains(string(b), "omni") {
			t.Errorf("project=%v: settings.json changed although init failed: %s", project, b)
		}
	}
}

// TestProjectFileOutsideRefused: a repository whose .mcp.json (or
// .claude directory) is a link to a file outside it makes init --project
// refuse; the outside file keeps its bytes.
func TestProjectFileOutsideRefused(t *testing.T) {
	o := linkOptions(t, true)
	outside := filepath.Join(o.Home, "other.json")
	orig := []byte("{\"mcpServers\": {}}\n")
	if err := os.WriteFile(outside, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(o.Project, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	err := Run(io.Discard, []Host{Claude}, o, true, false, false)
	if err == nil || !strings.Contains(err.Error(), "outside the project") {
		t.Errorf("init --project followed .mcp.json out of the repository: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != string(orig) {
		t.Errorf("the outside file changed: %s", b)
	}
	if _, err := os.Stat(filepath.Join(o.Project, ".claude", "settings.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("settings.json written although the run was refused")
	}

	// A directory link out of the repository is refused the same way.
	o = linkOptions(t, true)
	away := t.TempDir()
	if err := os.RemoveAll(filepath.Join(o.Project, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(away, filepath.Join(o.Project, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := Run(io.Discard, []Host{Claude}, o, true, false, false); err == nil {
		t.Errorf("init --project wrote through a .claude link out of the repository")
	}
	if es, _ := os.ReadDir(away); len(es) != 0 {
		t.Errorf("files created outside the repository: %v", es)
	}
	// A link inside the repository is followed.
	o = linkOptions(t, true)
	real := filepath.Join(o.Project, "conf", "mcp.json")
	_ = os.MkdirAll(filepath.Dir(real), 0o755)
	if err := os.WriteFile(real, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(o.Project, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	if err := Run(io.Discard, []Host{Claude}, o, true, false, false); err != nil {
		t.Errorf("a link inside the repository: %v", err)
	}
}

// TestInitAllOrNothing: an invalid ~/.claude.json stops init before it
// writes the hooks to settings.json; a failed write puts back the files
// written before it.
func TestInitAllOrNothing(t *testing.T) {
	o := linkOptions(t, false)
	if err := os.WriteFile(filepath.Join(o.Home, ".claude.json"), []byte("{ not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Run(io.Discard, []Host{Claude}, o, true, false, false); err == nil {
		t.Fatal("init passed over an invalid ~/.claude.json")
	}
	if _, err := os.Stat(filepath.Join(o.Home, ".claude", "settings.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("settings.json written before the failure: %v", err)
	}

	// A write that fails (the second file's directory is a file) undoes
	// the first.
	o = linkOptions(t, false)
	settings := filepath.Join(o.Home, ".claude", "settings.json")
	_ = os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := []byte("{\"model\": \"x\"}\n")
	if err := os.WriteFile(settings, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	ops := []fileOp{
		{path: settings, data: []byte("{}\n"), before: orig, existed: true, backup: settings + BackupSuffix, backupData: orig},
		{path: filepath.Join(settings, "x.json"), data: []byte("{}\n")},
	}
	if err := commit(ops); err == nil {
		t.Fatal("commit reported success for a write that cannot happen")
	}
	if b, _ := os.ReadFile(settings); string(b) != string(orig) {
		t.Errorf("settings.json not put back: %s", b)
	}
	if _, err := os.Lstat(settings + BackupSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the backup of an undone run stays")
	}
}

// TestCodexTOMLMultilineString: a multi-line string that holds
// "[mcp_servers.omni]" is text, not a table: install appends the real
// table and keeps the string whole (the file still parses), uninstall
// removes only the table omni wrote.
func TestCodexTOMLMultilineString(t *testing.T) {
	src := "model = \"o3\"\n" +
		"notes = \"\"\"\nsetup steps:\n[mcp_servers.omni]\ncommand = \"old\"\n\"\"\"\n" +
		"literal = '''\n[mcp_servers.omni.env]\nx = 1\n'''\n" +
		"[profiles.a]\nmodel = \"o4\"\n"
	out, err := applyCodexTOML([]byte(src), "/o/omni", true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), src) {
		t.Fatalf("install changed the user's lines:\n%s", out)
	}
	if _, err := tomlTables(out); err != nil {
		t.Fatalf("installed file does not parse: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "[mcp_servers.omni]"); n != 2 {
		t.Errorf("%d [mcp_servers.omni] lines, want the string's and omni's table", n)
	}
	back, err := applyCodexTOML(out, "/o/omni", false)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != src {
		t.Errorf("uninstall did not give the file back:\n%q\nwant\n%q", back, src)
	}
	if _, err := applyCodexTOML([]byte("a = \"\"\"unterminated\n"), "/o/omni", true); err == nil {
		t.Error("a file that does not parse was edited")
	}
}
