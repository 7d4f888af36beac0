package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// probeWait bounds omni init's check of new cluster settings: the
// connection (2 s, remoteConnectTimeout) and two JetStream requests.
const probeWait = 5 * time.Second

// ClusterSetup is what `omni init` was told about the backend.
type ClusterSetup struct {
	// Set records Settings in the home (--nats-url, or --embedded with
	// Settings empty); false keeps what is recorded and only reports it.
	Set      bool
	Settings wire.ClusterConfig
	// DryRun checks and reports without writing.
	DryRun bool
}

// ErrClusterSetup marks settings omni init refuses: a file that does not
// exist, a bad stream name or replica count, a cluster that does not
// answer or refuses the credentials. Nothing was written.
var ErrClusterSetup = errors.New("cluster settings refused")

// SetupCluster records the backend of home for omni init and says, on w,
// which backend hooks use and where that comes from. With s.Set and a
// URL it makes the files absolute, connects to the cluster with them
// (jetstream.ProbeCluster, within 5 s) and, when it answers, writes
// home/ClusterFile; with s.Set and no URL it removes that file (the
// embedded store). A daemon already running on another backend is
// replaced at the next hook (Addr.Backend). lookup (os.LookupEnv) is read
// to warn when OMNI_NATS_URL in this environment overrides the file.
// Errors: ErrClusterSetup (wrapped, nothing written), the file system's.
func SetupCluster(ctx context.Context, w io.Writer, home string, s ClusterSetup, lookup func(string) (string, bool)) error {
	path := filepath.Join(home, ClusterFile)
	c := s.Settings
	if s.Set && !c.Embedded() {
		for _, f := range []*string{&c.Creds, &c.CA, &c.Cert, &c.Key} {
			if *f == "" {
				continue
			}
			abs, err := filepath.Abs(*f)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrClusterSetup, err)
			}
			*f = abs
		}
		if c.Replicas < 0 || c.Replicas > 5 {
			return fmt.Errorf("%w: %d replicas: want 1 to 5 (0: 3 on a cluster of three or more, else 1)", ErrClusterSetup, c.Replicas)
		}
		pctx, cancel := context.WithTimeout(ctx, probeWait)
		cs, err := jetstream.ProbeCluster(pctx, c.URL, jetstream.Remote{Creds: c.Creds, CA: c.CA, Cert: c.Cert, Key: c.Key, Stream: c.Stream})
		cancel()
		if err != nil {
			return fmt.Errorf("%w: %v: nothing written", ErrClusterSetup, err)
		}
		fmt.Fprintf(w, "cluster: %s\n", describeProbe(cs))
	}
	if s.Set {
		verb := "wrote"
		if c.Embedded() {
			verb = "removed"
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				verb = ""
			}
		}
		if s.DryRun && verb != "" {
			verb = "would have " + verb
		} else if verb != "" {
			if err := wire.WriteCluster(home, c); err != nil {
				return err
			}
		}
		if verb != "" {
			fmt.Fprintf(w, "%s %s\n", verb, path)
		}
	}
	rec, err := wire.ReadCluster(home, func(string) (string, bool) { return "", false })
	if s.DryRun && s.Set {
		rec, err = c, nil
		if !c.Embedded() {
			rec.Source = path
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "backend: %s\n", describeBackend(home, rec))
	if u, ok := lookup(EnvNATSURL); ok && strings.TrimSpace(u) != rec.URL {
		env, _ := wire.ReadCluster(home, lookup)
		fmt.Fprintf(w, "note: %s is set in this environment: processes that inherit it use %s instead\n",
			EnvNATSURL, describeBackend(home, env))
	}
	return nil
}

// DescribeBackend says in words where the log of home lives as this
// process reads the settings (wire.ReadCluster with lookup, os.LookupEnv)
// and where they come from, for omni doctor and omni init.
func DescribeBackend(home string, lookup func(string) (string, bool)) string {
	c, err := wire.ReadCluster(home, lookup)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return describeBackend(home, c)
}

// describeBackend says in words where the log of c lives.
func describeBackend(home string, c wire.ClusterConfig) string {
	if c.Embedded() {
		return fmt.Sprintf("the embedded store (%s); 'omni init --nats-url URL' shares a NATS cluster instead", storeDir(home))
	}
	stream := c.Stream
	if stream == "" {
		stream = wire.DefaultStream
	}
	from := c.Source
	if from == "" {
		from = "settings"
	}
	return fmt.Sprintf("stream %s on the NATS cluster %s (from %s)", stream, wire.RedactURLs(c.URL), from)
}

// describeProbe says in one line what ProbeCluster found.
func describeProbe(cs jetstream.ClusterState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s answers", cs.URL)
	if cs.Server != "" {
		fmt.Fprintf(&b, " (server %s", cs.Server)
		if cs.Cluster != "" {
			fmt.Fprintf(&b, " of cluster %s", cs.Cluster)
		}
		b.WriteString(")")
	}
	if cs.Error != "" {
		return b.String() + "; " + cs.Error
	}
	fmt.Fprintf(&b, "; stream %s R%d", cs.Stream, cs.Replicas)
	for i, p := range cs.Peers {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		state := "current"
		switch {
		case p.Leader:
			state = "leader"
		case p.Offline:
			state = "offline"
		case !p.Current:
			state = fmt.Sprintf("lagging %d", p.Lag)
		}
		fmt.Fprintf(&b, "%s%s %s", sep, p.Name, state)
	}
	return b.String()
}
