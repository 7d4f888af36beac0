package wire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"time"
)

// TLSName is the name in every daemon certificate and the name a client
// verifies: the certificate is pinned, so the name only has to agree.
const TLSName = "omni-daemon"

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
