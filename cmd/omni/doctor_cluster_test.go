package main

import (
	"os"
	"strings"
	"testing"

	"github.com/omnictx/omni/events/jetstream/jstest"
	"github.com/omnictx/omni/internal/daemon"
)

// TestDoctorCluster: with the cluster recorded by omni init, omni doctor
// names the backend, the connection, the stream and its replicas; with
// the cluster stopped it names the settings and says the cluster does
// not answer.
func TestDoctorCluster(t *testing.T) {
	initEnv(t)
	t.Setenv(daemon.EnvNATSURL, "")
	os.Unsetenv(daemon.EnvNATSURL)
	c := jstest.Start(t, 1)
	if code, out, errs := initRun(t, "init", "--nats-url", c.URL(), "--nats-stream", "DOC"); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errs)
	}
	_, out, _ := initRun(t, "doctor")
	if !strings.Contains(out, "backend  cluster "+c.URL()+", connected to n1; stream DOC R1") {
		t.Fatalf("doctor with the cluster up:\n%s", out)
	}
	c.StopAll()
	_, out, _ = initRun(t, "doctor")
	if !strings.Contains(out, "backend  stream DOC on the NATS cluster "+c.URL()) || !strings.Contains(out, "does not answer") || !strings.Contains(out, "cluster unreachable") {
		t.Fatalf("doctor with the cluster stopped:\n%s", out)
	}
}
