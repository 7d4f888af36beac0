package rewrite

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
	"shellWord": oldShellWord(),
	"harmless": {"cd": true, "true": true, "false": true, "echo": true, "printf": true,
		"test": true, "[": true, "pwd": true, ":": true},
}

func TestSetsAnswerAsTheirMaps(t *testing.T) {
	funcs := map[string]func(string) bool{
		"shellWord": shellWord,
		"harmless":  harmless,
	}
	for name, m := range oldSets {
		settest.AnswersAsMap(t, name, funcs[name], m)
	}
}

func oldShellWord() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`alias bg bind break builtin caller cd command compgen complete compopt
		continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history
		jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift
		shopt source suspend test times trap true type typeset ulimit umask unalias unset wait . : [ [[ ]]
		if then else elif fi case esac for select while until do done in function time { } ! coproc`) {
		m[w] = true
	}
	return m
}
