package daemon

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestScrubHome: after a forget, the checkpoint is removed, a base
// snapshot keeps decoding with the value masked to the same length, a log
// file has it replaced (raw and JSON-escaped), and a store file that
// still holds it is named in the error.
func TestScrubHome(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "store")
	if err := os.MkdirAll(filepath.Join(store, "jetstream"), 0o700); err != nil {
		t.Fatal(err)
	}
	const value = `pa"ss-0123456789`
	type snap struct{ Sources map[string]string }
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(snap{Sources: map[string]string{"k": "curl -u me:" + value + " x"}}); err != nil {
		t.Fatal(err)
	}
	write := func(p string, b []byte) {
		t.Helper()
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(checkpointPath(home), []byte("cp "+value))
	write(BasePath(home, 7), seal(baseHeader, body.Bytes()))
	write(filepath.Join(home, "omni.log"), []byte("raw "+value+"\njson \"pa\\\"ss-0123456789\"\nclean\n"))
	write(filepath.Join(home, "other.txt"), []byte("nothing here\n"))

	var rep ForgetReport
	if err := scrubHome(home, []byte(value), &rep); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(checkpointPath(home)); !os.IsNotExist(err) || len(rep.Removed) != 1 {
		t.Errorf("checkpoint kept: %v %v", err, rep.Removed)
	}
	b, _ := os.ReadFile(BasePath(home, 7))
	got, err := unseal(b[len(baseHeader):])
	if err != nil {
		t.Fatal(err)
	}
	var s snap
	if err := gob.NewDecoder(bytes.NewReader(got)).Decode(&s); err != nil {
		t.Fatalf("masked base does not decode: %v", err)
	}
	if want := "curl -u me:" + strings.Repeat("*", len(value)) + " x"; s.Sources["k"] != want {
		t.Errorf("base: %q", s.Sources["k"])
	}
	if b, _ := os.ReadFile(filepath.Join(home, "omni.log")); string(b) != "raw [REDACTED]\njson \"[REDACTED]\"\nclean\n" {
		t.Errorf("omni.log: %q", b)
	}
	if len(rep.Rewritten) != 2 {
		t.Errorf("rewritten: %v", rep.Rewritten)
	}

	write(filepath.Join(store, "jetstream", "1.blk"), []byte("msg "+value))
	if err := scrubHome(home, []byte(value), &rep); err == nil || !strings.Contains(err.Error(), "1.blk") {
		t.Errorf("a store file holding the value: %v", err)
	}
}

// TestScrubHomeCompressed: a store file that holds the value only inside
// a compressed output (base64 of a zstd frame, as a batch stores an input)
// is named, not passed over.
func TestScrubHomeCompressed(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "store", "js")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	const value = "Zq8x-compressed-0123456789"
	enc, _ := zstd.NewWriter(nil)
	frame := enc.EncodeAll([]byte(strings.Repeat("line of output\n", 50)+"token="+value+"\n"), nil)
	rec := `{"kind":"invoked","invoked":{"input":"` + base64.StdEncoding.EncodeToString(frame) + `","codec":"zstd"}}`
	if err := os.WriteFile(filepath.Join(store, "1.blk"), []byte("\x00\x01hdr"+rec+"\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	var rep ForgetReport
	err := scrubHome(home, []byte(value), &rep)
	if err == nil || !strings.Contains(err.Error(), "1.blk (inside a compressed output)") {
		t.Errorf("a compressed stale copy: %v", err)
	}
}
