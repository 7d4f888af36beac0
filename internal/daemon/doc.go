// Package daemon is the omni daemon: one process per $OMNI_HOME owns the
// event store and answers hook clients over loopback NATS. Its wire
// protocol and only client transport live in the wire subpackage.
package daemon
