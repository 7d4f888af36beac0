package distill

import (
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// Filter kinds: the strongest command after the producer in its pipeline
// (Command.Filter).
const (
	FilterNone     = ""         // nothing, or tee/less/more/cat: the output as produced
	FilterTruncate = "truncate" // | head, | tail: a slice of the producer's output
	FilterReshape  = "reshape"  // | grep, | sort, | jq, ...: another program's answer
)

// Command is what a shell command line tells about the output it prints:
// who produces it, with which arguments, and what happens to it afterwards.
// Analyze computes it; Pick chooses a distiller from it.
type Command struct {
	// Program is the producer's program: the base name, lowercased, after
	// environment assignments and wrappers (env, sudo, time, npx, uv run,
	// python -m, ...) are skipped (shellcmd.Program). Python modules and
	// well-known scripts get a name of their own ("pytest", "unittest",
	// "django-test"). "" when no command of the line prints anything.
	Program string
	// Args are the producer's arguments after Program.
	Args []string
	// Chain: more than one command of the line writes to the output (`a &&
	// b`, `a; echo $?`), or the line has control flow the parser does not
	// follow (subshells, loops, conditionals); no distiller may speak for it.
	Chain bool
	// Filter is the strongest filter after the producer in its pipeline:
	// FilterNone, FilterTruncate or FilterReshape.
	Filter string
	// Enumeration: every output row is the answer (ls, find, git --stat,
	// kubectl get, docker ps, file readers such as cat and sed, ...); it
	// passes whole and never collapses.
	Enumeration bool
	// Verbatim: output the user wants byte for byte (terraform plan).
	Verbatim bool
	// OwnRecovery: `omni retrieve` or `omni diff`, whose output is omni's
	// own recovery of earlier bytes and must never be shortened again.
	OwnRecovery bool
}

// Analyze parses a shell command line far enough to find its one producer
// of output: the
// one pipeline that writes to the output once silent commands (cd, export,
// mkdir, ...) and pipelines redirected away are set aside. shellcmd.Parse
// tokenises it; nothing is expanded.
func Analyze(cmd string) Command {
	return analyze(cmd, 0)
}

func analyze(cmd string, depth int) Command {
	var ci Command
	pipes, complexCmd := shellcmd.Parse(cmd)
	if complexCmd {
		ci.Chain = true
		return ci
	}
	var producer []shellcmd.Command
	producers := 0
	for _, p := range pipes {
		if len(p) == 0 {
			continue
		}
		if pipelineSilent(p) {
			continue
		}
		producers++
		producer = p
	}
	if producers > 1 {
		ci.Chain = true
		return ci
	}
	if producers == 0 {
		return ci
	}
	first := producer[0]
	prog, args := shellcmd.Program(first.Words)
	// bash -c '…': the inner line decides.
	if (prog == "bash" || prog == "sh" || prog == "zsh" || prog == "dash") && len(args) >= 2 && args[0] == "-c" && depth < 2 {
		inner := analyze(args[1], depth+1)
		if len(producer) == 1 {
			return inner
		}
		ci = inner
	} else {
		ci.Program, ci.Args = prog, args
	}
	for _, c := range producer[1:] {
		f := filterKind(c.Words)
		if f == FilterReshape || (f == FilterTruncate && ci.Filter == FilterNone) {
			ci.Filter = f
		}
	}
	if ci.Program == "omni" && len(ci.Args) > 0 && (ci.Args[0] == "retrieve" || ci.Args[0] == "diff") {
		ci.OwnRecovery = true
	}
	ci.Enumeration = isEnumeration(ci.Program, ci.Args)
	ci.Verbatim = isVerbatim(ci.Program, ci.Args)
	return ci
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// silentPrograms print nothing on success: a pipeline made of one of them
// is not a producer of output (`cd x && cmd` has one producer, cmd).
var silentPrograms = map[string]bool{
	"cd": true, "export": true, "set": true, "unset": true, "source": true, ".": true,
	"alias": true, "unalias": true, "shopt": true, "ulimit": true, "umask": true,
	"true": true, "false": true, ":": true, "mkdir": true, "touch": true, "rm": true,
	"cp": true, "mv": true, "ln": true, "chmod": true, "chown": true, "sleep": true,
	"trap": true, "hash": true, "readonly": true, "declare": true, "local": true,
	"wait": true, "clear": true, "rmdir": true, "exit": true, "return": true,
	"activate": true, "deactivate": true,
}

// pipelineSilent reports whether a pipeline writes nothing to the output:
// one silent program, or a last command whose stdout is redirected away.
func pipelineSilent(p []shellcmd.Command) bool {
	last := p[len(p)-1]
	if last.StdoutAway {
		return true
	}
	if len(p) > 1 {
		return false
	}
	prog, args := shellcmd.Program(p[0].Words)
	if prog == "" {
		return true // assignments only
	}
	if silentPrograms[prog] {
		// -v makes rm, cp, mv, mkdir, chmod talk.
		for _, a := range args {
			if a == "-v" || a == "--verbose" {
				return false
			}
		}
		return true
	}
	// conda activate, nvm use --silent, pyenv shell, sed -i: silent.
	if (prog == "conda" || prog == "mamba") && len(args) > 0 && (args[0] == "activate" || args[0] == "deactivate") {
		return true
	}
	if prog == "sed" {
		for _, a := range args {
			if strings.HasPrefix(a, "-i") {
				return true
			}
		}
	}
	return false
}

// filterKind classifies a command after the producer in a pipeline.
func filterKind(words []string) string {
	prog, args := shellcmd.Program(words)
	switch prog {
	case "tee", "less", "more":
		return FilterNone
	case "cat":
		if len(args) == 0 || (len(args) == 1 && args[0] == "-") {
			return FilterNone
		}
		return FilterReshape
	case "head", "tail":
		return FilterTruncate
	}
	return FilterReshape
}

// hasArg reports whether args hold one of the given words.
func hasArg(args []string, want ...string) bool {
	for _, a := range args {
		for _, w := range want {
			if a == w {
				return true
			}
		}
	}
	return false
}

// hasArgPrefix reports whether some arg starts with one of the prefixes.
func hasArgPrefix(args []string, prefixes ...string) bool {
	for _, a := range args {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
	}
	return false
}

// subcommand returns the first argument that is not a flag ("" if none),
// skipping the arguments of git's global flags (-C dir, -c k=v).
func subcommand(args []string) (string, []string) {
	for k := 0; k < len(args); k++ {
		a := args[k]
		if a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "-n" || a == "--namespace" ||
			a == "--context" || a == "--kubeconfig" || a == "-f" || a == "--file" || a == "-p" || a == "--project-name" ||
			a == "--prefix" || a == "--dir" || a == "--filter" || a == "-w" || a == "--workspace" || a == "--cwd" {
			k++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return a, args[k+1:]
	}
	return "", nil
}

// enumerationPrograms print rows that are each the answer; their output
// passes whole and never collapses (ls, find, grep and the like: each row
// may be the one the agent needs). File readers are here too: a file read
// is never filtered.
var enumerationPrograms = map[string]bool{
	"ls": true, "ll": true, "dir": true, "exa": true, "eza": true, "lsd": true, "find": true, "fd": true,
	"fdfind": true, "tree": true, "du": true, "df": true, "ps": true, "pgrep": true, "stat": true,
	"wc": true, "file": true, "which": true, "whereis": true, "type": true, "lsof": true, "netstat": true,
	"ss": true, "env": true, "printenv": true, "cat": true, "bat": true, "batcat": true, "head": true,
	"tail": true, "less": true, "more": true, "nl": true, "sed": true, "awk": true, "gawk": true,
	"echo": true, "printf": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true,
	"ack": true, "jq": true, "yq": true, "sort": true, "uniq": true, "cut": true, "column": true,
	"xxd": true, "hexdump": true, "od": true, "base64": true, "sha256sum": true, "md5sum": true,
	"sha1sum": true, "diff": true, "cmp": true, "history": true, "id": true, "whoami": true,
	"uname": true, "date": true, "pwd": true, "hostname": true, "free": true, "uptime": true,
	"lsblk": true, "mount": true, "ip": true, "ifconfig": true, "locate": true, "readlink": true,
	"realpath": true, "basename": true, "dirname": true, "psql": true, "mysql": true, "sqlite3": true,
	"redis-cli": true, "mongosh": true, "pg_dump": true, "dpkg": true, "rpm": true, "tac": true,
	"strings": true, "column-t": true, "man": true, "info": true, "tldr": true, "cloc": true,
	"tokei": true, "zcat": true, "zgrep": true, "lscpu": true, "nproc": true, "getent": true,
}

// isEnumeration reports whether a program's output is an enumeration or a
// read whose every row is the answer.
func isEnumeration(prog string, args []string) bool {
	if enumerationPrograms[prog] {
		return true
	}
	sub, rest := subcommand(args)
	switch prog {
	case "git":
		switch sub {
		case "blame", "annotate", "branch", "tag", "remote", "ls-files", "ls-tree", "ls-remote",
			"shortlog", "reflog", "grep", "rev-parse", "rev-list", "config", "describe", "cat-file",
			"for-each-ref", "worktree", "count-objects", "var", "help", "show-ref", "name-rev", "cherry":
			return true
		case "stash":
			return len(rest) > 0 && (rest[0] == "list" || rest[0] == "show")
		case "status":
			return hasArg(rest, "-s", "--short", "--porcelain", "-sb", "-bs") || hasArgPrefix(rest, "--porcelain=")
		case "log":
			return hasArg(rest, "--oneline", "--stat", "--numstat", "--shortstat", "--name-only", "--name-status",
				"--graph", "--raw") || hasArgPrefix(rest, "--format", "--pretty", "--stat=")
		case "diff", "show", "whatchanged":
			if hasArg(rest, "--stat", "--numstat", "--shortstat", "--name-only", "--name-status", "--raw", "--summary", "--check") ||
				hasArgPrefix(rest, "--stat=", "--format", "--pretty") {
				return true
			}
			if sub == "show" {
				// git show REV:path prints a file.
				for _, a := range rest {
					if !strings.HasPrefix(a, "-") && strings.Contains(a, ":") {
						return true
					}
				}
			}
		}
	case "kubectl", "oc", "k":
		switch sub {
		case "get", "top", "api-resources", "api-versions", "config", "version", "explain", "auth", "cluster-info":
			return true
		}
	case "docker", "podman", "nerdctl":
		switch sub {
		case "ps", "images", "volume", "network", "context", "inspect", "stats", "port", "history", "top",
			"version", "info", "system", "search", "node", "service", "stack", "secret", "plugin":
			return true
		case "image", "container":
			return len(rest) > 0 && (rest[0] == "ls" || rest[0] == "list" || rest[0] == "inspect" || rest[0] == "history")
		case "compose":
			s2, _ := subcommand(rest)
			return s2 == "ps" || s2 == "ls" || s2 == "images" || s2 == "config" || s2 == "top" || s2 == "port"
		}
	case "docker-compose":
		return sub == "ps" || sub == "images" || sub == "config" || sub == "top"
	case "helm":
		return sub == "list" || sub == "ls" || sub == "status" || sub == "get" || sub == "show" || sub == "template" || sub == "history" || sub == "search" || sub == "repo"
	case "gh", "glab", "hub":
		return hasArg(args, "list", "ls", "view", "diff", "api", "status", "search", "checks")
	case "npm", "pnpm", "yarn", "bun":
		return sub == "ls" || sub == "list" || sub == "outdated" || sub == "view" || sub == "info" || sub == "why" || sub == "explain" || sub == "config" || sub == "bin" || sub == "root" || sub == "prefix" || sub == "pack" || sub == "search"
	case "pip", "pip3", "uv", "conda", "mamba", "poetry", "pipx":
		return sub == "list" || sub == "freeze" || sub == "show" || sub == "index" || sub == "inspect" || sub == "tree" || (sub == "pip" && len(rest) > 0 && (rest[0] == "list" || rest[0] == "freeze" || rest[0] == "show"))
	case "cargo":
		return sub == "tree" || sub == "metadata" || sub == "search" || sub == "pkgid" || sub == "locate-project"
	case "go":
		return sub == "list" || sub == "env" || sub == "version" || sub == "doc"
	case "brew":
		return sub == "list" || sub == "info" || sub == "search" || sub == "deps" || sub == "outdated"
	case "apt", "apt-cache", "dnf", "yum":
		return sub == "list" || sub == "search" || sub == "show" || sub == "policy" || sub == "depends"
	case "terraform", "tofu":
		return sub == "output" || sub == "show" || sub == "state" || sub == "providers" || sub == "version" || sub == "workspace" || sub == "graph" || sub == "fmt"
	case "aws", "gcloud", "az":
		return hasArg(args, "ls", "list") || hasArgPrefix(args, "list-", "describe-", "get-")
	case "tar", "unzip", "zip", "7z":
		return hasArgPrefix(args, "-t", "t", "-l") || hasArg(args, "--list")
	case "tsc":
		return false
	}
	return false
}

// isVerbatim reports commands whose output passes byte for byte without
// being an enumeration: a terraform/tofu plan, whose every line is the
// answer.
func isVerbatim(prog string, args []string) bool {
	if prog == "terraform" || prog == "tofu" || prog == "terragrunt" {
		sub, _ := subcommand(args)
		return sub == "plan"
	}
	return false
}
