package rewrite

import (
	"crypto/rand"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// genToken returns a GitHub-token-shaped credential made now, so no
// fixed string can be special-cased.
func genToken(t *testing.T) string {
	const al = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("ghp_")
	for i := 0; i < 36; i++ {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(al))))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, al[n.Int64()])
	}
	return string(b)
}

// TestRulesCacheHoldsNoSecret: Claude Code writes the commands a user
// allowed "always" into settings.local.json verbatim, credentials
// included (GITHUB_TOKEN=… gh pr list). The rules cache must not copy
// such a rule into the omni home (rule 2: a secret never reaches a
// file): the rules still come out as Load's, read from the settings
// file on each call, and a cache written before for those files is
// removed.
func TestRulesCacheHoldsNoSecret(t *testing.T) {
	skipNoCache(t)
	f := newCacheFixture(t)
	tok := genToken(t)
	local := filepath.Join(f.src.Project[0], ".claude", "settings.local.json")
	writeSettings(t, local, []string{"Bash(go test:*)"}, nil, nil)
	if _, err := LoadCached(f.home, f.src, later()); err != nil || len(cacheFiles(t, f.home)) != 1 {
		t.Fatalf("no cache written for rules without a secret: %v", err)
	}
	writeSettings(t, local, []string{"Bash(go test:*)", "Bash(GITHUB_TOKEN=" + tok + " gh pr list)"}, nil, []string{"Bash(curl -H 'Authorization: Bearer " + tok + "':*)"})
	for i := 0; i < 2; i++ {
		got, err := LoadCached(f.home, f.src, later())
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := Load(f.src); !reflect.DeepEqual(got, want) {
			t.Fatalf("LoadCached = %+v, Load %+v", got, want)
		}
	}
	_ = filepath.Walk(f.home, func(p string, fi os.FileInfo, _ error) error {
		if fi != nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), tok) {
				t.Errorf("%s holds the credential of a settings rule", p)
			}
		}
		return nil
	})
}
