package shellcmd

import "strings"

// wrapperFlagsWithArg returns, for a wrapper, the flags that take a separate
// argument (blank-separated, with a blank at each end) and true; for any
// other word "" and false.
func wrapperFlagsWithArg(w string) (string, bool) {
	switch w {
	case "env":
		return " -u -C -S --unset --chdir --split-string ", true
	case "sudo":
		return " -u -g -h -p -C -D -r -t -U --user --group --host --prompt --chdir ", true
	case "doas":
		return " -u -C ", true
	case "time":
		return " -f -o --format --output ", true
	case "nice":
		return " -n --adjustment ", true
	case "timeout":
		return " -s -k --signal --kill-after ", true
	case "stdbuf":
		return " -i -o -e --input --output --error ", true
	case "npx":
		return " -p --package -c --call ", true
	case "pnpx":
		return " -p --package ", true
	case "bunx":
		return " -p --package ", true
	case "xvfb-run":
		return " -n -s -f -e -p --server-num --server-args --auth-file --error-file --xauth-protocol ", true
	case "nohup":
		return " ", true
	case "command":
		return " ", true
	case "builtin":
		return " ", true
	case "exec":
		return " -a ", true
	case "unbuffer":
		return " ", true
	case "chronic":
		return " ", true
	case "caffeinate":
		return " -w -t ", true
	case "ionice":
		return " -c -n -p -t ", true
	case "taskset":
		return " ", true
	case "dotenv":
		return " -e -f -c -v ", true
	}
	return "", false
}

// twoWordWrappers run their third word as the program ("uv run pytest").
func twoWordWrappers(s string) bool {
	switch s {
	case "uv run", "poetry run", "pipenv run", "pdm run", "hatch run",
		"rye run", "bundle exec", "pnpm exec", "pnpm dlx", "yarn dlx",
		"yarn exec", "npm exec", "conda run", "mamba run", "micromamba run",
		"mise exec", "mise x", "doppler run", "op run", "devbox run", "rtx exec", "asdf exec":
		return true
	}
	return false
}

// Program returns the program a simple command's words run, and its
// arguments. It skips VAR=value assignments and wrappers that run another
// command (env, sudo, time, nice, timeout DURATION, npx, nohup, ...,
// including their flags and flag arguments, and two-word runners such as
// "uv run", "poetry run", "bundle exec"). The program is ProgramName of its
// word; "python -m mod" resolves to mod, `python manage.py test` to
// "django-test", runtests.py to "django-runtests", bin/test to
// "sympy-test", node ./node_modules/.bin/jest to jest, py.test to pytest.
// A bare env is ("env", nil); words that hold only assignments and wrappers
// give ("", nil).
func Program(words []string) (string, []string) {
	i := 0
	for guard := 0; guard < 16 && i < len(words); guard++ {
		w := words[i]
		if IsAssignment(w) {
			i++
			continue
		}
		base := ProgramName(w)
		if flags, ok := wrapperFlagsWithArg(base); ok {
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
				for i < len(words) && (IsAssignment(words[i]) || strings.HasPrefix(words[i], "-")) {
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
		if i+1 < len(words) && twoWordWrappers(base+" "+words[i+1]) {
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
	prog := ProgramName(words[i])
	args := words[i+1:]
	// node ./node_modules/.bin/jest → jest
	if prog == "node" && len(args) > 0 && strings.Contains(args[0], "node_modules/") {
		return ProgramName(args[0]), args[1:]
	}
	if isPython(prog) {
		for k := 0; k < len(args); k++ {
			a := args[k]
			switch {
			case a == "-m" && k+1 < len(args):
				return ProgramName(args[k+1]), args[k+2:]
			case strings.HasPrefix(a, "-m") && len(a) > 2:
				return ProgramName(a[2:]), args[k+1:]
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
	base := ProgramName(script)
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

// ProgramName is the lowercased base name of a program path, without
// ".exe" ("/usr/bin/Python3.EXE" → "python3").
func ProgramName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		w = w[i+1:]
	}
	w = strings.ToLower(w)
	return strings.TrimSuffix(w, ".exe")
}
