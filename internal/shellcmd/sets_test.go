package shellcmd

import (
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/settest"
)

// The sets below were map literals, built by the package's initialisation;
// they are switch statements now (no code runs when the package loads).
// These are the old literals: each function must answer as its map did,
// for every key and for near misses (other case, a byte more or less).
var oldSets = map[string]map[string]bool{
	"twoWordWrappers": {"uv run": true, "poetry run": true, "pipenv run": true, "pdm run": true, "hatch run": true,
		"rye run": true, "bundle exec": true, "pnpm exec": true, "pnpm dlx": true, "yarn dlx": true,
		"yarn exec": true, "npm exec": true, "conda run": true, "mamba run": true, "micromamba run": true,
		"mise exec": true, "mise x": true, "doppler run": true, "op run": true, "nix-shell --run": false,
		"devbox run": true, "rtx exec": true, "asdf exec": true},
	"readPrograms": {"cat": true, "head": true, "tail": true, "nl": true, "sed": true, "less": true, "more": true, "bat": true, "batcat": true},
	"readFilters":  {"head": true, "tail": true, "sed": true, "nl": true, "cat": true},
}

func TestSetsAnswerAsTheirMaps(t *testing.T) {
	funcs := map[string]func(string) bool{
		"twoWordWrappers": twoWordWrappers,
		"readPrograms":    readPrograms,
		"readFilters":     readFilters,
	}
	for name, m := range oldSets {
		settest.AnswersAsMap(t, name, funcs[name], m)
	}
}

var oldWrapperFlags = map[string]string{
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

func TestWrapperFlagsAnswerAsTheirMap(t *testing.T) {
	for k := range oldWrapperFlags {
		for _, s := range []string{k, strings.ToUpper(k), k + "x", k[1:]} {
			got, ok := wrapperFlagsWithArg(s)
			want, wantOK := oldWrapperFlags[s]
			if got != want || ok != wantOK {
				t.Errorf("wrapperFlagsWithArg(%q) = %q, %v; the map said %q, %v", s, got, ok, want, wantOK)
			}
		}
	}
}
