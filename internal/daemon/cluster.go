package daemon

import (
	"strconv"
	"strings"

	"github.com/omnictx/omni/events/jetstream"
)

// The environment variables that put a home's log on a NATS cluster
// (Config.ClusterURL and Config.Cluster). Without EnvNATSURL the log is
// the embedded store.
const (
	// EnvNATSURL lists the cluster's server URLs, comma-separated
	// ("nats://h1:4222,nats://h2:4222,nats://h3:4222").
	EnvNATSURL = "OMNI_NATS_URL"
	// EnvNATSCreds is a NATS .creds file (user JWT and nkey seed).
	EnvNATSCreds = "OMNI_NATS_CREDS"
	// EnvNATSCA is a PEM file of the CAs that sign the servers' certificates.
	EnvNATSCA = "OMNI_NATS_CA"
	// EnvNATSCert and EnvNATSKey are the client certificate and key (mutual TLS).
	EnvNATSCert = "OMNI_NATS_CERT"
	EnvNATSKey  = "OMNI_NATS_KEY"
	// EnvNATSStream names the stream (default EVENTS).
	EnvNATSStream = "OMNI_NATS_STREAM"
	// EnvNATSReplicas is the replication of a stream omni creates (default:
	// 3 on a cluster of three or more servers, else 1).
	EnvNATSReplicas = "OMNI_NATS_REPLICAS"
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

// WithClusterEnv returns cfg with ClusterURL and Cluster read from the
// environment through getenv (os.Getenv). An OMNI_NATS_REPLICAS that is not
// a number becomes -1, which opening the store refuses with a message.
func WithClusterEnv(cfg Config, getenv func(string) string) Config {
	cfg.ClusterURL = strings.TrimSpace(getenv(EnvNATSURL))
	cfg.Cluster = jetstream.Remote{Creds: getenv(EnvNATSCreds), CA: getenv(EnvNATSCA),
		Cert: getenv(EnvNATSCert), Key: getenv(EnvNATSKey), Stream: getenv(EnvNATSStream)}
	if v := strings.TrimSpace(getenv(EnvNATSReplicas)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			n = -1
		}
		cfg.Cluster.Replicas = n
	}
	return cfg
}

// clusterEnv returns cfg's cluster settings as environment assignments,
// so a daemon the client spawns uses the backend the client was given
// (every variable is set, empty ones included, to override the
// inherited environment).
func (cfg Config) clusterEnv() []string {
	r := cfg.Cluster
	reps := ""
	if r.Replicas != 0 {
		reps = strconv.Itoa(r.Replicas)
	}
	return []string{EnvNATSURL + "=" + cfg.ClusterURL, EnvNATSCreds + "=" + r.Creds, EnvNATSCA + "=" + r.CA,
		EnvNATSCert + "=" + r.Cert, EnvNATSKey + "=" + r.Key, EnvNATSStream + "=" + r.Stream, EnvNATSReplicas + "=" + reps}
}
