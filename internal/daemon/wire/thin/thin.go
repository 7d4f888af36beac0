// Package thin is the part of the omni daemon's wire protocol that the
// thin hook client (cmd/omni-hook) links: the address file and the home's
// trust checks, the back-off, the build identity, the cluster settings
// and, where the platform has them, the local socket's one-call client
// (Call). It imports the standard library and golang.org/x/sys only,
// never net, nats.go or crypto/tls: linking net makes a cgo build
// dynamically linked, and the loader and those packages' initialisation
// cost more than the whole rest of a hook call. On the 2-core development
// machine (2026-12-02, load 5–10, p50 of 40 starts) a trivial Go binary
// started in 1.72 ms, one with encoding/json and net in 2.64 ms (1.77 ms
// built static), one with the TLS client of nats.go in 3.72 ms.
//
// Package wire (its parent) re-exports every name here and adds the TLS
// client of the daemon's NATS listener.
package thin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The protocol.
const (
	// Protocol is the version of the request protocol between clients and
	// the daemon. Every request carries it in its method's name
	// (v4.<method>), so a daemon of another protocol does not answer and
	// the client replaces it. Bump it on any incompatible change of a
	// method's request or reply. Version 2 added the error code, which the
	// client needs to tell errors apart; version 3 the TLS listener and
	// Addr.Cert; version 4 the local socket (Addr.Sock).
	Protocol = 4
	// AddrFile is the daemon's address file in $OMNI_HOME.
	AddrFile = "daemon.addr"
	// FrozenFile marks a home whose log is a frozen stream (omni bench
	// writes it: its events keep the corpus's times, months old): the
	// daemon's retention never prunes such a home, or the replay it holds
	// would be cut the first time a daemon serves it (a retrieve).
	FrozenFile = "frozen"
	// MethodHook is the method of a hook payload: the request is one flags
	// byte (HookPassthrough) followed by the payload as the host sent it;
	// the reply is what the hook prints.
	MethodHook = "hook"
)

// HookPassthrough is bit 0 of the hook request's flags byte: record the
// call but deliver the output unchanged (OMNI_PASSTHROUGH).
const HookPassthrough byte = 1

// Addr is the content of $OMNI_HOME/daemon.addr (JSON, written atomically
// by the daemon, mode 0600).
type Addr struct {
	Addr     string `json:"addr"`     // "127.0.0.1:port"
	Token    string `json:"token"`    // auth token, 32 hex digits
	PID      int    `json:"pid"`      // daemon process id
	Protocol int    `json:"protocol"` // Protocol of the daemon
	Version  string `json:"version"`  // omni version of the daemon binary
	// Cert is the daemon's TLS certificate (base64 DER), the only one a
	// client accepts on Addr.
	Cert string `json:"cert"`
	// Sock is the daemon's local socket (SockPath of the home and the
	// daemon's pid), "" when it has none (a platform without one, a home
	// whose path is too long for a socket's name).
	Sock string `json:"sock,omitempty"`
	// Build is the daemon binary's build identity (BuildID).
	Build string `json:"build,omitempty"`
	// Exe is the daemon's executable and ExeStamp that file's identity
	// when the daemon started (FileStamp): a client that finds another
	// file there knows the daemon runs a replaced build.
	Exe      string `json:"exe,omitempty"`
	ExeStamp string `json:"exe_stamp,omitempty"`
	// Backend is the log the daemon serves (ClusterConfig.Backend:
	// "embedded", or the cluster's redacted URLs and stream): a client
	// whose settings name another backend replaces the daemon, as it does
	// a daemon of another build. Empty in daemons older than the field.
	Backend string `json:"backend,omitempty"`
}

// Errors of the trust checks and of a call.
var (
	// ErrUntrusted: the listener at the address did not prove that it is
	// this home's daemon (a TLS handshake that failed against the pinned
	// certificate, a plain NATS server, a server of another name, a local
	// socket held by another process or user). Nothing was sent to it: no
	// token, no payload.
	ErrUntrusted = errors.New("the listener did not prove it is this home's daemon")
	// ErrUnsafeHome: $OMNI_HOME, its store or the address file can be
	// written by another user (group- or world-writable, or owned by
	// another uid), so nothing in it can be trusted. Clients refuse it and
	// fail open; omni doctor says how to fix it.
	ErrUnsafeHome = errors.New("unsafe home")
	// ErrNoDaemon: no daemon of this protocol could be reached (no address
	// file, a stale address, a foreign server, another protocol, no
	// responder). The request was not handled.
	ErrNoDaemon = errors.New("no omni daemon of this protocol reachable")
	// ErrRemote: the daemon's handler returned an error.
	ErrRemote = errors.New("daemon error")
	// ErrNoSocket: the daemon has no local socket this client can use (a
	// platform without them, a daemon that did not make one); the caller
	// uses the TLS listener (package wire) or `omni hook`.
	ErrNoSocket = errors.New("the daemon has no local socket")
)

// Home returns $OMNI_HOME, else ~/.omni, else (HOME unset) ./.omni, as an
// absolute path (resolved against the working directory when relative; as
// given if that fails).
func Home() string {
	h := os.Getenv("OMNI_HOME")
	if h == "" {
		if u, err := os.UserHomeDir(); err == nil {
			h = filepath.Join(u, ".omni")
		} else {
			h = ".omni"
		}
	}
	if a, err := filepath.Abs(h); err == nil {
		return a
	}
	return h
}

// Subject returns the versioned name of a daemon method ("v4.hook").
func Subject(method string) string {
	return "v" + strconv.Itoa(Protocol) + "." + method
}

// CheckName validates a method name: one or more dot-separated tokens
// without spaces or the wildcards * and >.
func CheckName(name string) error {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.ContainsAny(name, " \t\r\n*>") {
		return fmt.Errorf("rpc method %q: invalid name", name)
	}
	return nil
}

// ReadAddr reads home's address file after checking that no one else
// can write the home or the file (CheckPrivate: repaired when they are
// ours). An address file owned by another user is removed (it cannot be
// trusted, and the home is ours) and reported as missing. Errors: the
// file's (fs.ErrNotExist when there is none), ErrUnsafeHome (wrapped), a
// JSON error, or an empty address.
func ReadAddr(home string) (Addr, error) {
	var ad Addr
	if err := CheckPrivate(home); err != nil {
		return ad, fmt.Errorf("daemon addr: %w", err)
	}
	path := filepath.Join(home, AddrFile)
	if err := CheckPrivate(path); err != nil {
		if errors.Is(err, ErrUnsafeHome) && os.Remove(path) == nil {
			return ad, fmt.Errorf("daemon addr: removed %s, which was not ours: %w", path, fs.ErrNotExist)
		}
		return ad, fmt.Errorf("daemon addr: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ad, fmt.Errorf("daemon addr: %w", err)
	}
	if err := decodeAddr(b, &ad); err != nil {
		return ad, fmt.Errorf("daemon addr: %w", err)
	}
	if ad.Addr == "" {
		return ad, errors.New("daemon addr: empty address")
	}
	return ad, nil
}

// RetireAddr removes home's address file if it still names token (the
// address read before its listener failed to prove itself, or before its
// daemon was stopped), so that the next client starts a daemon rather
// than dialing it again. It reports whether it removed it.
func RetireAddr(home, token string) bool {
	cur, err := ReadAddr(home)
	if err != nil || cur.Token != token {
		return false
	}
	return os.Remove(filepath.Join(home, AddrFile)) == nil
}

// CheckPrivate checks that path (a directory or file of the home) is this
// user's and no one else can write it. When it is ours but group- or
// world-writable it is repaired (chmod 0700 for a directory, 0600 for a
// file) and nil returned; a missing path is nil. Errors (wrapping
// ErrUnsafeHome): owned by another uid, or writable by others and not
// repairable. Where files have no owner uid (Windows) the owner is the
// file's owner SID (ownedByOtherAccount).
func CheckPrivate(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnsafeHome, path, err)
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("%w: %s is owned by uid %d, not by this user (uid %d): move it aside and let omni make a new one, or set OMNI_HOME to a directory of yours",
			ErrUnsafeHome, path, uid, os.Geteuid())
	} else if !ok && ownedByOtherAccount(path) { // Windows: the owner SID
		return fmt.Errorf("%w: %s is owned by another account, not by this user: move it aside and let omni make a new one, or set OMNI_HOME to a directory of yours",
			ErrUnsafeHome, path)
	}
	if fi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	want := fs.FileMode(0o600)
	if fi.IsDir() {
		want = 0o700
	}
	if err := os.Chmod(path, want); err != nil {
		return fmt.Errorf("%w: %s is writable by others (mode %04o) and could not be repaired: %v: run 'chmod %o %s'",
			ErrUnsafeHome, path, fi.Mode().Perm(), err, want, path)
	}
	return nil
}
