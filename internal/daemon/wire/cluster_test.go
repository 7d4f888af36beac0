package wire

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env is a lookup over a fixed environment.
func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func TestReadCluster(t *testing.T) {
	home := t.TempDir()
	// Nothing configured: the embedded store.
	c, err := ReadCluster(home, env(nil))
	if err != nil || !c.Embedded() || c.Source != "" || c.Backend() != "embedded" {
		t.Fatalf("no settings: %+v, %v", c, err)
	}
	file := ClusterConfig{URL: "nats://alice:pw@h1:4222, nats://h2:4222", Creds: "/k/omni.creds", CA: "/k/ca.pem", Stream: "TEAM", Replicas: 3}
	if err := WriteCluster(home, file); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ClusterFile)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v; want mode 0600", path, fi, err)
	}
	// The file, when the environment names no cluster.
	c, err = ReadCluster(home, env(map[string]string{EnvNATSCreds: "/env.creds"}))
	if err != nil || c.URL != file.URL || c.Creds != "/k/omni.creds" || c.Stream != "TEAM" || c.Replicas != 3 || c.Source != path {
		t.Fatalf("from the file: %+v, %v", c, err)
	}
	if b := c.Backend(); b != "nats nats://h1:4222,nats://h2:4222 stream TEAM" || strings.Contains(b, "pw") {
		t.Fatalf("Backend() = %q, want the URLs without credentials and the stream", b)
	}
	// OMNI_NATS_URL in the environment replaces the whole file, even empty.
	c, err = ReadCluster(home, env(map[string]string{EnvNATSURL: " nats://h9:4222 ", EnvNATSReplicas: "x"}))
	if err != nil || c.URL != "nats://h9:4222" || c.Creds != "" || c.Stream != "" || c.Replicas != -1 || c.Source != "environment" {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
	if b := c.Backend(); b != "nats nats://h9:4222 stream "+DefaultStream {
		t.Fatalf("Backend() = %q", b)
	}
	if c, err = ReadCluster(home, env(map[string]string{EnvNATSURL: ""})); err != nil || !c.Embedded() {
		t.Fatalf("OMNI_NATS_URL set empty: %+v, %v; want the embedded store", c, err)
	}
	// A file others could write is repaired when it is ours; one that does
	// not parse is an error, not a guess.
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCluster(home, env(nil)); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm()&0o022 != 0 {
		t.Fatalf("mode %v not repaired", fi.Mode())
	}
	if err := os.WriteFile(path, []byte("{url"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCluster(home, env(nil)); err == nil || !strings.Contains(err.Error(), ClusterFile) {
		t.Fatalf("a file that does not parse: %v", err)
	}
	// Writing the embedded store removes the file.
	if err := WriteCluster(home, ClusterConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s after WriteCluster(embedded): %v", path, err)
	}
}

func TestBackendMismatch(t *testing.T) {
	ad := Addr{Backend: "embedded"}
	if why := ad.BackendMismatch("embedded"); why != "" {
		t.Fatalf("same backend: %q", why)
	}
	if why := ad.BackendMismatch("nats nats://h1:4222 stream EVENTS"); !strings.Contains(why, "embedded") {
		t.Fatalf("other backend: %q", why)
	}
	if why := (Addr{}).BackendMismatch("nats nats://h1:4222 stream EVENTS"); why != "" {
		t.Fatalf("an address without a backend (an older daemon) is left to its build check: %q", why)
	}
}
