package daemon

import (
	"strconv"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// The environment variables that put a home's log on a NATS cluster
// (Config.ClusterURL and Config.Cluster; wire.ReadCluster). When
// EnvNATSURL is set (even empty) they are the settings; otherwise the
// home's ClusterFile (written by omni init --nats-url) is; without either
// the log is the embedded store.
const (
	EnvNATSURL      = wire.EnvNATSURL
	EnvNATSCreds    = wire.EnvNATSCreds
	EnvNATSCA       = wire.EnvNATSCA
	EnvNATSCert     = wire.EnvNATSCert
	EnvNATSKey      = wire.EnvNATSKey
	EnvNATSStream   = wire.EnvNATSStream
	EnvNATSReplicas = wire.EnvNATSReplicas
	// ClusterFile is $OMNI_HOME/cluster.json (wire.ClusterFile).
	ClusterFile = wire.ClusterFile
)

// ClusterEnv lists the cluster variables with their meaning, for
// `omni help environment` and the README.
var ClusterEnv = [][2]string{
	{EnvNATSURL, "server URLs of a NATS cluster, comma-separated: the log lives on its JetStream instead of the embedded store"},
	{EnvNATSCreds, "a NATS .creds file (user JWT and nkey seed) to authenticate with"},
	{EnvNATSCA, "PEM file of the CAs that sign the servers' TLS certificates"},
	{EnvNATSCert, "client TLS certificate (PEM), with " + EnvNATSKey},
	{EnvNATSKey, "client TLS key (PEM), with " + EnvNATSCert},
	{EnvNATSStream, "stream name (default EVENTS); every machine of a team uses the same"},
	{EnvNATSReplicas, "replicas of a stream omni creates: 1 to 5 (default 3 on a cluster of three or more, else 1)"},
}

// WithCluster returns cfg with its cluster settings (ClusterURL, Cluster,
// ClusterSource) read by wire.ReadCluster: from the environment through
// lookup (os.LookupEnv) when OMNI_NATS_URL is set there, else from
// cfg.Home's ClusterFile, else none (the embedded store). A file that
// cannot be read or parsed sets ClusterErr, which every request of a
// Client and Run then return (hooks fail open) instead of guessing a
// backend.
func WithCluster(cfg Config, lookup func(string) (string, bool)) Config {
	c, err := wire.ReadCluster(cfg.Home, lookup)
	if err != nil {
		cfg.ClusterErr = err
		return cfg
	}
	cfg.ClusterURL, cfg.ClusterSource = c.URL, c.Source
	cfg.Cluster = jetstream.Remote{Creds: c.Creds, CA: c.CA, Cert: c.Cert, Key: c.Key, Stream: c.Stream, Replicas: c.Replicas}
	return cfg
}

// ClusterConfig returns cfg's cluster settings in the wire's form.
func (cfg Config) ClusterConfig() wire.ClusterConfig {
	r := cfg.Cluster
	return wire.ClusterConfig{URL: cfg.ClusterURL, Creds: r.Creds, CA: r.CA, Cert: r.Cert, Key: r.Key,
		Stream: r.Stream, Replicas: r.Replicas, Source: cfg.ClusterSource}
}

// Backend is the backend identity of cfg (wire.ClusterConfig.Backend):
// "embedded", or the cluster's redacted URLs and stream. The daemon
// writes it to daemon.addr; a client replaces a daemon whose backend is
// not its own.
func (cfg Config) Backend() string { return cfg.ClusterConfig().Backend() }

// clusterEnv returns cfg's cluster settings as environment assignments,
// so a daemon the client spawns uses the backend the client was given
// (every variable is set, empty ones included, to override the
// inherited environment and the home's ClusterFile).
func (cfg Config) clusterEnv() []string {
	r := cfg.Cluster
	reps := ""
	if r.Replicas != 0 {
		reps = strconv.Itoa(r.Replicas)
	}
	return []string{EnvNATSURL + "=" + cfg.ClusterURL, EnvNATSCreds + "=" + r.Creds, EnvNATSCA + "=" + r.CA,
		EnvNATSCert + "=" + r.Cert, EnvNATSKey + "=" + r.Key, EnvNATSStream + "=" + r.Stream, EnvNATSReplicas + "=" + reps}
}
