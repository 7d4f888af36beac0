// Command natscluster runs a JetStream cluster of nats-servers on loopback
// ports until interrupted, from the nats-server module omni links (the
// same cluster the team tests start), and prints the OMNI_NATS_URL that
// reaches it: for trying two homes on one machine and for the README's
// figures. With -tls the nodes speak TLS with a CA made for the run, and
// with -creds they authenticate users by JWT (operator mode); it prints
// the OMNI_NATS_CA and OMNI_NATS_CREDS that go with them (the
// administrator's: every right). With -creds and -members N it also issues
// N member machines' credentials with the team permission template
// (jetstream.TeamPermissions: publish on the machine's own subject only,
// no purge, delete or update) and prints, per member, the machine id to
// write to that home's machine.id and its OMNI_NATS_CREDS.
//
//	go run ./tools/natscluster [-n 3] [-dir DIR] [-tls] [-creds [-members N] [-stream NAME]]
package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/events/jetstream/jstest"
)

// runner satisfies jstest.TB outside a test.
type runner struct {
	dir      string
	cleanups []func()
}

func (r *runner) Helper()                           {}
func (r *runner) Fatalf(format string, args ...any) { r.stop(); log.Fatalf(format, args...) }
func (r *runner) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *runner) TempDir() string {
	d, err := os.MkdirTemp(r.dir, "node")
	if err != nil {
		log.Fatal(err)
	}
	return d
}

func (r *runner) stop() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

func main() {
	n := flag.Int("n", 3, "number of nodes")
	dir := flag.String("dir", "", "directory for the nodes' stores (default: a new temporary directory)")
	useTLS := flag.Bool("tls", false, "serve clients over TLS (a CA made for the run; prints OMNI_NATS_CA)")
	useCreds := flag.Bool("creds", false, "authenticate users by JWT, operator mode (prints OMNI_NATS_CREDS)")
	members := flag.Int("members", 0, "with -creds: issue this many member machines' credentials (the team permission template)")
	stream := flag.String("stream", jetstream.StreamName, "with -members: the stream the members share (OMNI_NATS_STREAM)")
	flag.Parse()
	if *members > 0 && !*useCreds {
		log.Fatal("-members needs -creds")
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "natscluster")
		if err != nil {
			log.Fatal(err)
		}
		*dir = d
		defer os.RemoveAll(d)
	}
	r := &runner{dir: *dir}
	var with jstest.Options
	if *useTLS || *useCreds {
		with.Security = jstest.NewSecurity(r, jstest.Want{TLS: *useTLS, Creds: *useCreds})
	}
	c := jstest.StartWith(r, *n, with)
	fmt.Printf("OMNI_NATS_URL=%s\n", c.URL())
	if s := with.Security; s != nil && s.CA != "" {
		fmt.Printf("OMNI_NATS_CA=%s\n", s.CA)
	}
	if s := with.Security; s != nil && s.Creds != "" {
		fmt.Printf("OMNI_NATS_CREDS=%s   (administrator: every right)\n", s.Creds)
	}
	for i := 0; i < *members; i++ {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			log.Fatal(err)
		}
		id := hex.EncodeToString(b[:])
		pa, pd, sa := jetstream.TeamPermissions(*stream, id)
		creds := with.Security.UserCreds(r, "member-"+id, jstest.Permissions{PubAllow: pa, PubDeny: pd, SubAllow: sa})
		fmt.Printf("member %d: echo %s > $OMNI_HOME/machine.id; OMNI_NATS_CREDS=%s\n", i+1, id, creds)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	r.stop()
}
