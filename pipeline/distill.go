package pipeline

import (
	"strings"
)

// Filter kinds of the commands after a producer in its pipeline.
const (
	filterNone     = ""
	filterTruncate = "truncate" // | head, | tail: a slice of the producer's output
	filterReshape  = "reshape"  // | grep, | sort, | jq, ...: another program's answer
)

// cmdInfo is what Shorten learns from a command line: who produces the
// output, with which arguments, and what happens to it afterwards.
type cmdInfo struct {
	// prog is the producer's program: the base name, lowercased, after
	// environment assignments and wrappers (env, sudo, time, npx, uv run,
	// python -m, ...) are skipped. Python modules and well-known scripts get
	// a name of their own ("pytest", "unittest", "django-test").
	prog string
	// args are the producer's arguments after prog.
	args []string
	// chain: more than one command of the line writes to the output (`a &&
	// b`, `a; echo $?`), or the line has control flow the parser does not
	// follow (subshells, loops, conditionals); no distiller may speak for it.
	chain bool
	// filter is the strongest filter after the producer in its pipeline.
	filter string
	// enumeration: every output row is the answer (ls, find, git --stat,
	// kubectl get, docker ps, ...); it passes whole and never collapses.
	enumeration bool
	// verbatim: output the user wants byte for byte (terraform plan).
	verbatim bool
	// ownRecovery: `omni retrieve` or `omni diff` (REFERENCE.md §2.3).
	ownRecovery bool
}

// analyzeCommand parses a shell command line far enough to find its one
// producer of output (REFERENCE.md §2.6 step 3, fajarhide/omni#264). It
// tokenises quotes, escapes, $(…), backquotes, comments, redirections and
// here-documents; it does not expand anything.
func analyzeCommand(cmd string) cmdInfo {
	return analyzeCommandDepth(cmd, 0)
}

func analyzeCommandDepth(cmd string, depth int) cmdInfo {
	var ci cmdInfo
	pipes, complexCmd := parseShell(cmd)
	if complexCmd {
		ci.chain = true
		return ci
	}
	var producer []simpleCmd
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
		ci.chain = true
		return ci
	}
	if producers == 0 {
		return ci
	}
	first := producer[0]
	prog, args := resolveProgram(first.words)
	// bash -c '…': the inner line decides.
	if (prog == "bash" || prog == "sh" || prog == "zsh" || prog == "dash") && len(args) >= 2 && args[0] == "-c" && depth < 2 {
		inner := analyzeCommandDepth(args[1], depth+1)
		if len(producer) == 1 {
			return inner
		}
		ci = inner
	} else {
		ci.prog, ci.args = prog, args
	}
	for _, c := range producer[1:] {
		f := filterKind(c.words)
		if f == filterReshape || (f == filterTruncate && ci.filter == filterNone) {
			ci.filter = f
		}
	}
	if ci.prog == "omni" && len(ci.args) > 0 && (ci.args[0] == "retrieve" || ci.args[0] == "diff") {
		ci.ownRecovery = true
	}
	ci.enumeration = isEnumeration(ci.prog, ci.args)
	ci.verbatim = isVerbatim(ci.prog, ci.args)
	return ci
}

// simpleCmd is one command of a pipeline: its words (quotes removed) and
// whether its stdout is redirected away from the output.
type simpleCmd struct {
	words      []string
	stdoutAway bool
}

// parseShell splits a command line into pipelines (separated by ;, &&, ||,
// & and newlines) of simple commands (separated by | and |&). complexCmd is
// true for subshells, groups and compound commands, which Shorten does not
// follow.
func parseShell(s string) (pipes [][]simpleCmd, complexCmd bool) {
	var cur []simpleCmd
	var words []string
	var word strings.Builder
	inWord := false
	away := false
	redirNext := false // the next word is a redirection target
	var heredocs []string
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if redirNext {
			redirNext = false
			return
		}
		words = append(words, w)
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cur = append(cur, simpleCmd{words: words, stdoutAway: away})
		}
		words, away = nil, false
	}
	endPipe := func() {
		endCmd()
		if len(cur) > 0 {
			pipes = append(pipes, cur)
		}
		cur = nil
	}
	n := len(s)
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < n && s[i+1] == '\n' {
				i++
				continue
			}
			inWord = true
			if i+1 < n {
				word.WriteByte(s[i+1])
				i++
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				word.WriteString(s[i+1:])
				i = n
				continue
			}
			word.WriteString(s[i+1 : i+1+j])
			i += 1 + j
		case c == '"':
			inWord = true
			j := i + 1
			for j < n && s[j] != '"' {
				if s[j] == '\\' && j+1 < n {
					j++
				}
				word.WriteByte(s[j])
				j++
			}
			i = j
		case c == '`':
			inWord = true
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				i = n
				continue
			}
			word.WriteString(s[i : i+2+j])
			i += 1 + j
		case c == '$' && i+1 < n && s[i+1] == '(':
			inWord = true
			depth := 0
			j := i + 1
			for ; j < n; j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= n {
				j = n - 1
			}
			word.WriteString(s[i : j+1])
			i = j
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = n
				continue
			}
			i += j - 1
		case c == '\n':
			endPipe()
			// Here-document bodies follow the line that opened them.
			for _, delim := range heredocs {
				for i+1 < n {
					j := strings.IndexByte(s[i+1:], '\n')
					line := s[i+1:]
					if j >= 0 {
						line = s[i+1 : i+1+j]
					}
					if j < 0 {
						i = n
					} else {
						i += 1 + j
					}
					if strings.TrimSpace(line) == delim {
						break
					}
				}
			}
			heredocs = nil
		case c == ';' || c == '&':
			if c == '&' && i+1 < n && s[i+1] == '>' { // &> redirects stdout and stderr
				endWord()
				away = true
				i++
				if i+1 < n && s[i+1] == '>' {
					i++
				}
				redirNext = true
				continue
			}
			if c == '&' && i+1 < n && s[i+1] == '&' {
				i++
			}
			if c == ';' && i+1 < n && s[i+1] == ';' {
				complexCmd = true
				i++
			}
			endPipe()
		case c == '|':
			if i+1 < n && s[i+1] == '|' {
				i++
				endPipe()
				continue
			}
			if i+1 < n && s[i+1] == '&' {
				i++
			}
			endCmd()
		case c == '(' || c == ')':
			complexCmd = true
			endWord()
		case c == '>' || c == '<':
			// A redirection; digits just before it (2>) name the descriptor.
			fd := ""
			if inWord {
				w := word.String()
				if isDigits(w) {
					fd = w
					word.Reset()
					inWord = false
				} else {
					endWord()
				}
			}
			j := i
			for j < n && (s[j] == '>' || s[j] == '<' || s[j] == '&' || s[j] == '|' || s[j] == '-') {
				j++
			}
			op := s[i:j]
			i = j - 1
			if strings.HasPrefix(op, "<<") && op != "<<<" {
				// here-document: the delimiter word follows.
				k := i + 1
				for k < n && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				e := k
				for e < n && s[e] != ' ' && s[e] != '\t' && s[e] != '\n' && s[e] != ';' && s[e] != '|' && s[e] != '&' {
					e++
				}
				d := strings.Trim(s[k:e], `'"\`)
				if d != "" {
					heredocs = append(heredocs, d)
				}
				i = e - 1
				continue
			}
			if op[0] == '>' && (fd == "" || fd == "1") {
				// ">&2", "1>&2" send stdout to stderr, which the host shows
				// too; ">file" sends it away.
				if !strings.HasPrefix(op, ">&") {
					away = true
				}
			}
			if strings.HasSuffix(op, "&") {
				// 2>&1, >&2: the target is a descriptor word.
				k := i + 1
				for k < n && (s[k] >= '0' && s[k] <= '9' || s[k] == '-') {
					k++
				}
				i = k - 1
				continue
			}
			redirNext = true
		default:
			inWord = true
			word.WriteByte(c)
		}
	}
	endPipe()
	for _, p := range pipes {
		for _, c := range p {
			switch c.words[0] {
			case "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
				"function", "{", "}", "select", "[[":
				complexCmd = true
			}
		}
	}
	return pipes, complexCmd
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
// is not a producer of output (REFERENCE.md §2.6: `cd x && cmd` has one
// producer).
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
func pipelineSilent(p []simpleCmd) bool {
	last := p[len(p)-1]
	if last.stdoutAway {
		return true
	}
	if len(p) > 1 {
		return false
	}
	prog, args := resolveProgram(p[0].words)
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
	prog, args := resolveProgram(words)
	switch prog {
	case "tee", "less", "more":
		return filterNone
	case "cat":
		if len(args) == 0 || (len(args) == 1 && args[0] == "-") {
			return filterNone
		}
		return filterReshape
	case "head", "tail":
		return filterTruncate
	}
	return filterReshape
}

// wrapperFlagsWithArg lists, per wrapper, the flags that take a separate
// argument.
var wrapperFlagsWithArg = map[string]string{
	"env":        " -u -C -S --unset --chdir --split-string ",
	"sudo":       " -u -g -h -p -C -D -r -t -U --user --group --host --prompt --chdir ",
	"doas":       " -u -C ",
	"time":       " -f -o --format --output ",
	"nice":       " -n --adjustment ",
	"timeout":    " -s -k --signal --kill-after ",
	"stdbuf":     " -i -o -e --input --output --error ",
	"npx":        " -p --package -c --call ",
	"pnpx":       " -p --package ",
	"bunx":       " -p --package ",
	"xvfb-run":   " -n -s -f -e -p --server-num --server-args --auth-file --error-file --xauth-protocol ",
	"nohup":      " ",
	"command":    " ",
	"builtin":    " ",
	"exec":       " -a ",
	"unbuffer":   " ",
	"chronic":    " ",
	"caffeinate": " -w -t ",
	"ionice":     " -c -n -p -t ",
	"taskset":    " ",
	"dotenv":     " -e -f -c -v ",
}

// twoWordWrappers run their third word as the program ("uv run pytest").
var twoWordWrappers = map[string]bool{
	"uv run": true, "poetry run": true, "pipenv run": true, "pdm run": true, "hatch run": true,
	"rye run": true, "bundle exec": true, "pnpm exec": true, "pnpm dlx": true, "yarn dlx": true,
	"yarn exec": true, "npm exec": true, "conda run": true, "mamba run": true, "micromamba run": true,
	"mise exec": true, "mise x": true, "doppler run": true, "op run": true, "nix-shell --run": false,
	"devbox run": true, "rtx exec": true, "asdf exec": true,
}

// resolveProgram returns the program a command's words run, skipping
// VAR=value assignments and wrappers, and its arguments. The program is the
// base name, lowercased; "python -m mod" resolves to mod, `manage.py test`
// to "django-test", runtests.py to "django-runtests", bin/test to
// "sympy-test".
func resolveProgram(words []string) (string, []string) {
	i := 0
	for guard := 0; guard < 16 && i < len(words); guard++ {
		w := words[i]
		if isAssignment(w) {
			i++
			continue
		}
		base := progBase(w)
		if flags, ok := wrapperFlagsWithArg[base]; ok {
			i++
			if base == "timeout" {
				i = skipFlags(words, i, flags)
				if i < len(words) {
					i++ // the duration
				}
				continue
			}
			if base == "taskset" {
				i = skipFlags(words, i, flags)
				if i < len(words) {
					i++ // the mask
				}
				continue
			}
			if base == "env" || base == "dotenv" {
				for i < len(words) && (isAssignment(words[i]) || strings.HasPrefix(words[i], "-")) {
					if strings.Contains(flags, " "+words[i]+" ") {
						i++
					}
					i++
				}
				if i >= len(words) && base == "env" {
					return "env", nil // bare env prints the environment
				}
				continue
			}
			i = skipFlags(words, i, flags)
			continue
		}
		if i+1 < len(words) && twoWordWrappers[base+" "+words[i+1]] {
			i += 2
			// conda run -n env, doppler run --, op run --
			for i < len(words) && strings.HasPrefix(words[i], "-") {
				if words[i] == "--" {
					i++
					break
				}
				if words[i] == "-n" || words[i] == "-p" || words[i] == "--name" || words[i] == "--prefix" || words[i] == "--env-file" {
					i++
				}
				i++
			}
			continue
		}
		break
	}
	if i >= len(words) {
		return "", nil
	}
	prog := progBase(words[i])
	args := words[i+1:]
	// node ./node_modules/.bin/jest → jest
	if prog == "node" && len(args) > 0 && strings.Contains(args[0], "node_modules/") {
		return progBase(args[0]), args[1:]
	}
	if isPython(prog) {
		for k := 0; k < len(args); k++ {
			a := args[k]
			switch {
			case a == "-m" && k+1 < len(args):
				return progBase(args[k+1]), args[k+2:]
			case strings.HasPrefix(a, "-m") && len(a) > 2:
				return progBase(a[2:]), args[k+1:]
			case a == "-X" || a == "-W":
				k++
			case strings.HasPrefix(a, "-"):
			default:
				return pythonScript(a, args[k+1:])
			}
		}
		return "python", args
	}
	if strings.HasSuffix(prog, ".py") {
		return pythonScript(words[i], args)
	}
	if prog == "test" && strings.HasSuffix(words[i], "bin/test") {
		return "sympy-test", args
	}
	switch prog {
	case "py.test", "pytest-3", "py.test-3":
		prog = "pytest"
	}
	return prog, args
}

// pythonScript names a Python script run: Django's manage.py test and
// runtests.py speak unittest.
func pythonScript(script string, args []string) (string, []string) {
	base := progBase(script)
	switch {
	case base == "manage.py" && len(args) > 0 && args[0] == "test":
		return "django-test", args[1:]
	case base == "runtests.py":
		return "django-runtests", args
	}
	return "python", append([]string{script}, args...)
}

func isPython(p string) bool {
	if p == "python" || p == "python2" || p == "python3" || p == "pypy" || p == "pypy3" {
		return true
	}
	if strings.HasPrefix(p, "python3.") || strings.HasPrefix(p, "python2.") {
		return true
	}
	return false
}

// skipFlags skips flags (and the arguments of those listed in withArg)
// starting at words[i]; "--" ends them.
func skipFlags(words []string, i int, withArg string) int {
	for i < len(words) && strings.HasPrefix(words[i], "-") && len(words[i]) > 1 {
		w := words[i]
		i++
		if w == "--" {
			break
		}
		if !strings.Contains(w, "=") && strings.Contains(withArg, " "+w+" ") {
			i++
		}
	}
	return i
}

// isAssignment reports whether a word is NAME=value.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for k := 0; k < eq; k++ {
		c := w[k]
		if !(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (k > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// progBase is the lowercased base name of a program path, without ".exe".
func progBase(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		w = w[i+1:]
	}
	w = strings.ToLower(w)
	return strings.TrimSuffix(w, ".exe")
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
// passes whole and never collapses (REFERENCE.md §2.7 verbatim list, issue
// 3 §1). File readers are here too: a file read is never filtered.
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
// being an enumeration: a terraform/tofu plan (REFERENCE.md §4, issue 3).
func isVerbatim(prog string, args []string) bool {
	if prog == "terraform" || prog == "tofu" || prog == "terragrunt" {
		sub, _ := subcommand(args)
		return sub == "plan"
	}
	return false
}
