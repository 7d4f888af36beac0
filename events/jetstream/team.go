package jetstream

import (
	"errors"
	"fmt"
	"strings"

	"github.com/omnictx/omni/events"
)

// A team's stream on a cluster authenticates the origin of its batches
// with NATS's own authorization: each machine's daemon publishes on its
// own subject, TeamSubject(stream, machine), and the cluster gives each
// machine's user the right to publish on that subject only (the
// permission template is TeamPermissions). A reader checks that every
// event of a batch names the machine of the subject it was published on
// (the subject is the server's record, not the publisher's claim), and
// rejects the batch otherwise.

// teamPrefix starts every machine subject: "omni.team.<stream>.<token>",
// apart from the embedded store's "omni.events" subjects so no stream's
// subjects overlap another's.
const teamPrefix = "omni.team."

// ErrForged: a batch names a machine other than the one whose subject it
// was published on. The reader skips it (Read, Follow) or answers
// events.ErrNotFound (Get), and reports it through Remote.OnReject.
var ErrForged = errors.New("batch names a machine other than the one that published it")

// MachineToken returns the subject token of machine ("host/id", as
// internal/daemon's Identity names it): its id, the part after the last
// "/", lower-cased; "" when that is not 1 to 64 letters, digits, "-" or "_".
func MachineToken(machine string) string {
	id := machine[strings.LastIndexByte(machine, '/')+1:]
	id = strings.ToLower(id)
	if id == "" || len(id) > 64 {
		return ""
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return ""
		}
	}
	return id
}

// TeamSubject returns the subject the daemon of machine publishes on in
// the stream named stream ("" when machine has no token).
func TeamSubject(stream, machine string) string {
	tok := MachineToken(machine)
	if tok == "" {
		return ""
	}
	return teamPrefix + stream + "." + tok
}

// teamWildcard is the stream subject that holds every machine subject.
func teamWildcard(stream string) string { return teamPrefix + stream + ".*" }

// TeamPermissions returns the NATS permissions of a member machine of the
// stream named stream, the template a cluster's users are issued with
// (tools/natscluster, README): publish its batches on its own subject and
// use the JetStream API to read the stream (stream info, direct and
// leader gets, an ordered consumer), create it when missing; never
// publish on another machine's subject or the unattested one, purge,
// delete or update streams, or delete messages. pubAllow, pubDeny and
// subAllow are subject lists.
func TeamPermissions(stream, machine string) (pubAllow, pubDeny, subAllow []string) {
	side := stream + ReplacedSuffix
	pubAllow = []string{
		TeamSubject(stream, machine),
		"$JS.API.INFO",
		"$JS.API.STREAM.INFO." + stream, "$JS.API.STREAM.INFO." + side,
		"$JS.API.STREAM.CREATE." + stream,
		"$JS.API.DIRECT.GET." + stream, "$JS.API.DIRECT.GET." + stream + ".>",
		"$JS.API.DIRECT.GET." + side, "$JS.API.DIRECT.GET." + side + ".>",
		"$JS.API.STREAM.MSG.GET." + stream, "$JS.API.STREAM.MSG.GET." + side,
		"$JS.API.CONSUMER.CREATE." + stream, "$JS.API.CONSUMER.CREATE." + stream + ".>",
		"$JS.API.CONSUMER.INFO." + stream + ".>", "$JS.API.CONSUMER.DELETE." + stream + ".>",
		"$JS.FC.>",
	}
	pubDeny = []string{
		Subject, Subject + ".>",
		"$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.DELETE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.MSG.DELETE.>",
	}
	subAllow = []string{"_INBOX.>"}
	return pubAllow, pubDeny, subAllow
}

// teamToken returns the machine token of a subject published on a team
// stream's machine subject (ok false for any other subject).
func (st *Store) teamToken(subject string) (string, bool) {
	p := teamPrefix + st.name + "."
	if !strings.HasPrefix(subject, p) {
		return "", false
	}
	return subject[len(p):], true
}

// decode decodes the batch at seq published on subject and, for a machine
// subject, checks that every event names that machine: a batch that does
// not is ErrForged and reported (Remote.OnReject).
func (st *Store) decode(data []byte, seq events.Seq, subject string) ([]events.Event, error) {
	evs, err := events.Decode(data, seq)
	if err != nil {
		return nil, err
	}
	tok, ok := st.teamToken(subject)
	if !ok {
		return evs, nil
	}
	for _, e := range evs {
		if MachineToken(e.Machine) != tok {
			if _, seen := st.rejected.LoadOrStore(seq, true); !seen && st.onReject != nil {
				st.onReject(seq, subject, e.Machine) // once per batch
			}
			return nil, fmt.Errorf("batch %d on %s: event %s names machine %q: %w", seq, subject, e.ID, e.Machine, ErrForged)
		}
	}
	return evs, nil
}
