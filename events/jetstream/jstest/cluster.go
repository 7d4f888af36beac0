// Package jstest starts real JetStream clusters of nats-servers inside a
// test process, on loopback ports, from the nats-server module omni
// already links (nothing is downloaded or installed): the shared
// deployment OMNI_NATS_URL points at, for the team tests.
package jstest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// readyWait bounds how long a cluster (or a restarted node) takes to
// elect its JetStream meta leader. nats-server's election timeout is 4 to
// 9 s (server/raft.go, minElectionTimeoutDefault and
// maxElectionTimeoutDefault), so a restart of every node needs at least
// that.
const readyWait = 60 * time.Second

// TB is what Start needs of a test (testing.TB has it; a command that
// runs a cluster by hand provides its own).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// Cluster is a JetStream cluster of nats-servers in this process. Its
// nodes keep their ports and store directories across Stop and Start, as
// a real server restarted on its host does.
type Cluster struct {
	t       TB
	name    string
	mu      sync.Mutex
	opts    []*server.Options
	servers []*server.Server // nil while a node is stopped
	with    Options
}

// Options change the nodes a cluster starts with: TLS on the client port
// and operator-mode credentials (Security).
type Options struct {
	// Security, when set, is applied to every node's options
	// (Security.Apply) and its client options are used for the cluster's
	// own readiness checks.
	Security *Security
}

// Start starts a cluster of n nodes (n ≥ 1; one node runs without
// clustering), waits until JetStream answers, and stops it when the test
// ends.
func Start(t TB, n int) *Cluster { return StartWith(t, n, Options{}) }

// StartWith is Start with options.
func StartWith(t TB, n int, with Options) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("jstest: %d nodes", n)
	}
	c := &Cluster{t: t, name: "omnitest", with: with}
	ports := freePorts(t, 2*n)
	var routes []*url.URL
	if n > 1 {
		for i := 0; i < n; i++ {
			routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", ports[n+i])})
		}
	}
	base := t.TempDir()
	for i := 0; i < n; i++ {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: ports[i],
			JetStream: true, StoreDir: filepath.Join(base, fmt.Sprintf("n%d", i+1)),
			NoLog: true, NoSigs: true, DisableJetStreamBanner: true,
			MaxPayload: 32 << 20, MaxPending: 64 << 20,
		}
		if n > 1 {
			o.Cluster = server.ClusterOpts{Name: c.name, Host: "127.0.0.1", Port: ports[n+i]}
			o.Routes = routes
		}
		if with.Security != nil {
			with.Security.Apply(o)
		}
		c.opts = append(c.opts, o)
	}
	c.servers = make([]*server.Server, n)
	t.Cleanup(c.StopAll)
	for i := range c.opts {
		c.startNode(i)
	}
	c.WaitReady()
	return c
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("jstest: free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

func (c *Cluster) startNode(i int) {
	c.t.Helper()
	o := *c.opts[i]
	s, err := server.NewServer(&o)
	if err != nil {
		c.t.Fatalf("jstest: node %d: %v", i+1, err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		c.t.Fatalf("jstest: node %d not ready", i+1)
	}
	c.mu.Lock()
	c.servers[i] = s
	c.mu.Unlock()
}

// URL returns the client URLs of every node, comma-separated (the form
// OMNI_NATS_URL takes).
func (c *Cluster) URL() string {
	var us []string
	for _, o := range c.opts {
		us = append(us, fmt.Sprintf("nats://127.0.0.1:%d", o.Port))
	}
	return strings.Join(us, ",")
}

// Name returns node i's server name ("n1", "n2", ...; i from 0).
func (c *Cluster) Name(i int) string { return c.opts[i].ServerName }

// Stop shuts node i down (from 0) and waits until it has stopped.
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	s := c.servers[i]
	c.servers[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// StartNode starts node i again on its port and store directory.
func (c *Cluster) StartNode(i int) { c.startNode(i) }

// StopAll shuts every node down.
func (c *Cluster) StopAll() {
	for i := range c.opts {
		c.Stop(i)
	}
}

// StartAll starts every stopped node and waits until JetStream answers.
func (c *Cluster) StartAll() {
	c.t.Helper()
	for i := range c.opts {
		c.mu.Lock()
		up := c.servers[i] != nil
		c.mu.Unlock()
		if !up {
			c.startNode(i)
		}
	}
	c.WaitReady()
}

// WaitReady waits until a client of the cluster gets a JetStream account
// answer (a meta leader is elected), up to a minute, and fails the test
// otherwise.
func (c *Cluster) WaitReady() {
	c.t.Helper()
	deadline := time.Now().Add(readyWait)
	for {
		err := c.ping()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("jstest: cluster not ready after %s: %v", readyWait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ping asks the cluster's JetStream for the account's info once.
func (c *Cluster) ping() error {
	var copts []nats.Option
	if c.with.Security != nil {
		copts = c.with.Security.ClientOptions()
	}
	nc, err := nats.Connect(c.URL(), append(copts, nats.Timeout(time.Second), nats.NoReconnect())...)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = js.AccountInfo(nats.Context(ctx))
	return err
}

// Leader returns the index of the node leading the stream named name, -1
// when none is known.
func (c *Cluster) Leader(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	account := server.DEFAULT_GLOBAL_ACCOUNT
	if c.with.Security != nil && c.with.Security.Account != "" {
		account = c.with.Security.Account
	}
	for i, s := range c.servers {
		if s == nil {
			continue
		}
		if s.JetStreamIsStreamLeader(account, name) {
			return i
		}
	}
	return -1
}
