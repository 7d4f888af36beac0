package thin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/omnictx/omni/internal/natsurl"
)

// The environment variables that put a home's log on a NATS cluster. When
// EnvNATSURL is set in the environment (even empty) every cluster setting
// comes from these variables and ClusterFile is not read; otherwise the
// settings are ClusterFile's, and without that file the log is the
// embedded store.
const (
	// EnvNATSURL lists the cluster's server URLs, comma-separated
	// ("nats://h1:4222,nats://h2:4222,nats://h3:4222"); set and empty, it
	// selects the embedded store whatever ClusterFile says.
	EnvNATSURL = "OMNI_NATS_URL"
	// EnvNATSCreds is a NATS .creds file (user JWT and nkey seed).
	EnvNATSCreds = "OMNI_NATS_CREDS"
	// EnvNATSCA is a PEM file of the CAs that sign the servers' certificates.
	EnvNATSCA = "OMNI_NATS_CA"
	// EnvNATSCert and EnvNATSKey are the client certificate and key (mutual TLS).
	EnvNATSCert = "OMNI_NATS_CERT"
	EnvNATSKey  = "OMNI_NATS_KEY"
	// EnvNATSStream names the stream (default DefaultStream).
	EnvNATSStream = "OMNI_NATS_STREAM"
	// EnvNATSReplicas is the replication of a stream omni creates (default:
	// 3 on a cluster of three or more servers, else 1).
	EnvNATSReplicas = "OMNI_NATS_REPLICAS"
)

// ClusterFile is the file in $OMNI_HOME where `omni init --nats-url`
// records the cluster settings (JSON, ClusterConfig, mode 0600), so that a
// daemon uses the cluster whatever environment a host starts the hook in.
const ClusterFile = "cluster.json"

// DefaultStream is the stream's name when none is configured (the same as
// events/jetstream.StreamName; a test checks they agree).
const DefaultStream = "EVENTS"

// ClusterConfig is where a home's log lives: the embedded store (URL
// empty) or a stream on a NATS cluster, and how to reach it.
type ClusterConfig struct {
	// URL is the servers' URLs, comma-separated; "" for the embedded store.
	URL string `json:"url"`
	// Creds, CA, Cert and Key are files (absolute paths when written by
	// omni init): a .creds file, the servers' CAs, the client certificate
	// and key; "" for none.
	Creds string `json:"creds,omitempty"`
	CA    string `json:"ca,omitempty"`
	Cert  string `json:"cert,omitempty"`
	Key   string `json:"key,omitempty"`
	// Stream is the stream's name, "" for DefaultStream.
	Stream string `json:"stream,omitempty"`
	// Replicas is the replication of a stream omni creates: 0 automatic,
	// 1 to 5; -1 stands for a value that is not a number (opening the
	// store refuses it with a message).
	Replicas int `json:"replicas,omitempty"`
	// Source says where the settings came from: "environment", the path
	// of ClusterFile, or "" (nothing configured: the embedded store).
	Source string `json:"-"`
}

// Embedded reports whether c is the embedded store.
func (c ClusterConfig) Embedded() bool { return c.URL == "" }

// Backend is c's backend identity, written to daemon.addr (Addr.Backend)
// and compared by clients: "embedded", or "nats " and the servers' URLs
// with any user, password or token removed (RedactURLs), then " stream "
// and the stream's name. Two configurations with one identity store the
// same log.
func (c ClusterConfig) Backend() string {
	if c.Embedded() {
		return "embedded"
	}
	s := c.Stream
	if s == "" {
		s = DefaultStream
	}
	return "nats " + RedactURLs(c.URL) + " stream " + s
}

// RedactURLs returns the comma-separated server URLs in s, each trimmed,
// with any user, password or token removed (natsurl.Redact).
func RedactURLs(s string) string { return natsurl.Redact(s) }

// ReadCluster returns the cluster settings of home: from the environment
// (lookup, os.LookupEnv) when EnvNATSURL is set there, else from
// home/ClusterFile, else the embedded store. Errors: a ClusterFile that
// cannot be read or parsed, or that others can write (ErrUnsafeHome,
// wrapped): the caller fails open rather than guess a backend.
func ReadCluster(home string, lookup func(string) (string, bool)) (ClusterConfig, error) {
	if u, ok := lookup(EnvNATSURL); ok {
		get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
		c := ClusterConfig{URL: strings.TrimSpace(u), Creds: get(EnvNATSCreds), CA: get(EnvNATSCA),
			Cert: get(EnvNATSCert), Key: get(EnvNATSKey), Stream: get(EnvNATSStream), Source: "environment"}
		if v := get(EnvNATSReplicas); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				n = -1
			}
			c.Replicas = n
		}
		return c, nil
	}
	path := filepath.Join(home, ClusterFile)
	if err := CheckPrivate(path); err != nil {
		return ClusterConfig{}, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ClusterConfig{}, nil
	}
	if err != nil {
		return ClusterConfig{}, fmt.Errorf("cluster settings: %w", err)
	}
	var c ClusterConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return ClusterConfig{}, fmt.Errorf("cluster settings %s: %w (fix it, or rewrite it with 'omni init --nats-url URL', or remove it for the embedded store)", path, err)
	}
	c.URL = strings.TrimSpace(c.URL)
	c.Source = path
	return c, nil
}

// WriteCluster records c in home/ClusterFile (atomically, mode 0600), or
// removes the file when c is the embedded store. Errors: the file
// system's.
func WriteCluster(home string, c ClusterConfig) error {
	path := filepath.Join(home, ClusterFile)
	if c.Embedded() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cluster settings: %w", err)
		}
		return nil
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("cluster settings: %w", err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("cluster settings: %w", err)
	}
	f, err := os.CreateTemp(home, ".cluster.json.*")
	if err != nil {
		return fmt.Errorf("cluster settings: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), 0o600), os.Rename(f.Name(), path)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("cluster settings: %w", err)
	}
	return nil
}

// BackendMismatch says why the daemon of ad serves another backend than
// want (ClusterConfig.Backend of the settings this process would start a
// daemon with), or "" when they agree or ad names none (a daemon of an
// older build, which its build identity replaces).
func (ad Addr) BackendMismatch(want string) string {
	if ad.Backend == "" || ad.Backend == want {
		return ""
	}
	return fmt.Sprintf("it serves the backend %q, the settings now say %q", ad.Backend, want)
}
