package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestVersionJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version", "--json"}, streams{Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var b buildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	if b.Version != version || b.Protocol == 0 || !strings.HasPrefix(b.GoVersion, "go") || !strings.Contains(b.Platform, "/") {
		t.Fatalf("build info %+v", b)
	}
	out.Reset()
	if code := run([]string{"version"}, streams{Out: &out, Err: &errb}); code != 0 || !strings.HasPrefix(out.String(), "omni "+version+" (daemon protocol ") {
		t.Fatalf("exit %d: %q", code, out.String())
	}
}

// envRead finds the environment variables a source file reads: Getenv and
// LookupEnv calls, OMNI_* string literals, and process.env in the plugin.
var envRead = regexp.MustCompile(`(?:Getenv|LookupEnv)\("([A-Z_]+)"\)|"(OMNI_[A-Z_]+)"|process\.env\.([A-Z_]+)`)

// Every variable the module's code reads (tests aside) is listed by
// 'omni help environment'.
func TestEnvironmentHelpComplete(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"help", "environment"}, streams{Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	help := out.String()
	root := filepath.Join("..", "..")
	found := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(path, "_test.go") || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".js")) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range envRead.FindAllStringSubmatch(string(src), -1) {
			for _, v := range m[1:] {
				if v != "" {
					found[v] = path
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 10 {
		t.Fatalf("found only %v: the scan is broken", found)
	}
	for v, path := range found {
		if v == "PATH" || v == "HOME" {
			continue // the usual meaning
		}
		if !regexp.MustCompile(`\b` + v + `\b`).MatchString(help) {
			t.Errorf("%s (read in %s) is missing from 'omni help environment'", v, path)
		}
	}
}
