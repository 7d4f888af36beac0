package wire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"syscall"
	"time"
)

// TLSName is the name in every daemon certificate and the name a client
// verifies: the certificate is pinned, so the name only has to agree.
const TLSName = "omni-daemon"

// Errors of the trust checks.
var (
	// ErrUntrusted: the listener at the address did not prove that it is
	// this home's daemon (no certificate in the address file, a TLS
	// handshake that failed against the pinned certificate, a plain NATS
	// server, a server of another name). Nothing was sent to it: no token,
	// no payload.
	ErrUntrusted = errors.New("the listener did not prove it is this home's daemon")
	// ErrUnsafeHome: $OMNI_HOME, its store or the address file can be
	// written by another user (group- or world-writable, or owned by
	// another uid), so nothing in it can be trusted. Clients refuse it and
	// fail open; omni doctor says how to fix it.
	ErrUnsafeHome = errors.New("unsafe home")
)

// Identity is a daemon's TLS identity: a P-256 key generated at start that
// never leaves the process, and its self-signed certificate, which the
// daemon publishes in the address file (Addr.Cert) for clients to pin.
type Identity struct {
	// Cert is the certificate, DER.
	Cert []byte
	// Server is the TLS configuration of the daemon's listener (TLS 1.3,
	// the certificate and its key).
	Server *tls.Config
}

// NewIdentity generates a daemon identity: an ECDSA P-256 key and a
// self-signed certificate for TLSName, valid from an hour ago for ten
// years (a daemon lives until it idles out; the pin, not the dates, is
// what a client checks). Errors: the random source's or x509's.
func NewIdentity() (Identity, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Identity{}, fmt.Errorf("daemon identity: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return Identity{}, fmt.Errorf("daemon identity: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: TLSName},
		DNSNames:     []string{TLSName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Identity{}, fmt.Errorf("daemon identity: %w", err)
	}
	// X25519 alone: the hybrid post-quantum exchange Go prefers costs a
	// key generation per connection (ML-KEM showed as a tenth of a dial's
	// CPU in a profile, 2026-12-01) and guards a loopback session whose
	// key lives only as long as one daemon.
	return Identity{Cert: der, Server: &tls.Config{
		MinVersion:       tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{tls.X25519},
		Certificates:     []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
	}}, nil
}

// CertString renders a certificate for Addr.Cert (standard base64 of the DER).
func CertString(der []byte) string { return base64.StdEncoding.EncodeToString(der) }

// clientTLS returns the client configuration that trusts exactly the
// certificate of ad (base64 DER in Addr.Cert): the handshake succeeds only
// with a server that holds its private key. Errors: ErrUntrusted when
// ad has no certificate or it does not parse.
func clientTLS(ad Addr) (*tls.Config, error) {
	if ad.Cert == "" {
		return nil, fmt.Errorf("%w: the address file names no certificate", ErrUntrusted)
	}
	der, err := base64.StdEncoding.DecodeString(ad.Cert)
	if err != nil {
		return nil, fmt.Errorf("%w: certificate: %v", ErrUntrusted, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%w: certificate: %v", ErrUntrusted, err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, ServerName: TLSName,
		CurvePreferences: []tls.CurveID{tls.X25519}}, nil
}

// CheckPrivate checks that path (a directory or file of the home) is this
// user's and no one else can write it. When it is ours but group- or
// world-writable it is repaired (chmod 0700 for a directory, 0600 for a
// file) and nil returned; a missing path is nil. Errors (wrapping
// ErrUnsafeHome): owned by another uid, or writable by others and not
// repairable.
func CheckPrivate(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnsafeHome, path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%w: %s is owned by uid %d, not by this user (uid %d): move it aside and let omni make a new one, or set OMNI_HOME to a directory of yours",
			ErrUnsafeHome, path, st.Uid, os.Geteuid())
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
