package daemon

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// MachineFile is the file in the home that keeps the machine's random id.
const MachineFile = "machine.id"

// Identity returns the machine and user the events of home's daemon
// record: "<hostname>/<id>", where id is 8 random hex digits created once
// and kept in <home>/machine.id (so two homes on one host, or two hosts
// with one name, differ), and the login name ($USER when the account
// database has none). A home that cannot keep the file gets a fresh id
// per process.
func Identity(home string) (machine, login string) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	id := ""
	path := filepath.Join(home, MachineFile)
	if b, err := os.ReadFile(path); err == nil {
		id = strings.TrimSpace(string(b))
	}
	if !validMachineID(id) {
		var r [4]byte
		_, _ = rand.Read(r[:])
		id = hex.EncodeToString(r[:])
		if err := os.MkdirAll(home, 0o700); err == nil {
			// Two processes racing here each write a valid id; the file
			// keeps the last, which every later start reads.
			_ = writeFileAtomic(path, []byte(id+"\n"))
		}
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		login = u.Username
	} else {
		login = os.Getenv("USER")
	}
	return host + "/" + id, login
}

func validMachineID(id string) bool {
	if len(id) < 4 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// TeamProjectOf returns the project of dir on a log several machines
// share: the normalized URL of the repository's remote ("origin", else the
// first one) plus the path of the project inside the repository (empty
// for its top level, which is what ProjectOf returns), so two clones of
// one repository on two machines are one project. Without a repository
// or a remote it is ProjectOf(dir), the local path.
func TeamProjectOf(dir string) string {
	top := ProjectOf(dir)
	remote := repoRemote(top)
	if remote == "" {
		return top
	}
	return remote
}

// remoteCache keeps each repository's remote URL with the modification
// time of the config file it came from, so a hook reads .git/config only
// when it changed.
var remoteCache struct {
	sync.Mutex
	m map[string]remoteEntry
}

type remoteEntry struct {
	config string
	mod    time.Time
	url    string
}

// repoRemote returns the normalized remote URL of the repository whose
// top level is top ("" when top holds no .git or no remote).
func repoRemote(top string) string {
	config := gitConfigPath(top)
	if config == "" {
		return ""
	}
	fi, err := os.Stat(config)
	if err != nil {
		return ""
	}
	remoteCache.Lock()
	defer remoteCache.Unlock()
	if e, ok := remoteCache.m[top]; ok && e.config == config && e.mod.Equal(fi.ModTime()) {
		return e.url
	}
	u := NormalizeRemote(readRemote(config))
	if remoteCache.m == nil {
		remoteCache.m = map[string]remoteEntry{}
	}
	remoteCache.m[top] = remoteEntry{config: config, mod: fi.ModTime(), url: u}
	return u
}

// gitConfigPath finds the config file of the repository at top: .git/config,
// or for a worktree or submodule (.git is a file "gitdir: P") P/config, or
// the config of P's common directory (P/commondir) when it has one.
func gitConfigPath(top string) string {
	dotgit := filepath.Join(top, ".git")
	fi, err := os.Stat(dotgit)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		return filepath.Join(dotgit, "config")
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(top, gitdir)
	}
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		return filepath.Join(common, "config")
	}
	return filepath.Join(gitdir, "config")
}

// readRemote returns the url of remote "origin" in a git config file, else
// of the first remote with one, "" when none.
func readRemote(config string) string {
	f, err := os.Open(config)
	if err != nil {
		return ""
	}
	defer f.Close()
	section, first, origin := "", "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Join(strings.Fields(strings.Trim(line, "[]")), " "))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "url") || !strings.HasPrefix(section, "remote ") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if section == `remote "origin"` && origin == "" {
			origin = v
		}
		if first == "" {
			first = v
		}
	}
	if origin != "" {
		return origin
	}
	return first
}

// NormalizeRemote reduces a git remote URL to "host/path": the scheme,
// user, password and port dropped, the host lowercased, a trailing ".git"
// and slashes removed, so every spelling of one repository's URL (ssh,
// https, scp-like "git@host:owner/repo.git") gives one string. A local
// path (or file:// URL) stays a cleaned path. "" gives "".
func NormalizeRemote(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ""
	}
	var host, path string
	switch {
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil {
			return strings.TrimSuffix(strings.TrimRight(s, "/"), ".git")
		}
		if u.Scheme == "file" {
			return filepath.Clean(strings.TrimSuffix(strings.TrimRight(u.Path, "/"), ".git"))
		}
		host, path = u.Hostname(), u.Path
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "."):
		return filepath.Clean(strings.TrimSuffix(strings.TrimRight(s, "/"), ".git"))
	default:
		// scp-like: [user@]host:path
		h, p, ok := strings.Cut(s, ":")
		if !ok {
			return strings.TrimSuffix(strings.TrimRight(s, "/"), ".git")
		}
		if i := strings.LastIndex(h, "@"); i >= 0 {
			h = h[i+1:]
		}
		host, path = h, p
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	path = strings.TrimRight(path, "/")
	return strings.ToLower(host) + "/" + path
}
