package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

func TestZZTrainReport(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "train", "*", "meta.json"))
	sort.Strings(dirs)
	for _, m := range dirs {
		var meta dgMeta
		b, _ := os.ReadFile(m)
		_ = json.Unmarshal(b, &meta)
		rawB, _ := os.ReadFile(filepath.Join(filepath.Dir(m), "output.txt"))
		res := Shorten(ShortenRequest{Command: meta.Command, Text: string(rawB), ExitCode: meta.ExitCode})
		t.Logf("%-28s %6d -> %6d distiller=%q reason=%q %v", filepath.Base(filepath.Dir(m)), len(rawB), len(res.Text), res.Distiller, res.Reason, dgViolations(meta, string(rawB), res.Text))
	}
}
