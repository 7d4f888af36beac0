package jstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Want says which protections a Security sets up.
type Want struct {
	// TLS serves clients over TLS with a certificate for 127.0.0.1 signed
	// by a CA made for the test; MutualTLS also requires a client
	// certificate signed by it.
	TLS, MutualTLS bool
	// Creds runs the servers in operator mode (decentralized JWT
	// authentication): one operator, a system account and one account
	// with JetStream, whose user's .creds file is Security.Creds.
	Creds bool
}

// Security is a secured deployment's material, made in a test's
// temporary directory: PEM files for TLS and .creds files for JWT
// authentication, and the matching server options (Apply).
type Security struct {
	Want
	// CA signs the servers' and the client's certificates; OtherCA is a
	// CA that signed nothing here (a wrong CA). ClientCert and ClientKey
	// are a client certificate signed by CA. PEM files, "" without TLS.
	CA, OtherCA, ClientCert, ClientKey string
	// Creds is a .creds file of a user of Account; OtherCreds one of a
	// user whose account the operator never issued (wrong credentials).
	// Account is that account's public key (the account streams live
	// in). "" without Creds.
	Creds, OtherCreds, Account string

	serverTLS *tls.Config
	account   nkeys.KeyPair // signs Account's users (MemberCreds)
	dir       string
	operator  *jwt.OperatorClaims
	system    string
	resolver  *server.MemAccResolver
}

// NewSecurity makes the material want asks for under a new temporary
// directory of t.
func NewSecurity(t TB, want Want) *Security {
	t.Helper()
	dir := t.TempDir()
	s := &Security{Want: want}
	if want.TLS || want.MutualTLS {
		s.makeTLS(t, dir)
	}
	if want.Creds {
		s.makeJWT(t, dir)
	}
	return s
}

// Apply sets a node's options: TLS on the client port, operator mode
// with a memory resolver preloaded with the accounts.
func (s *Security) Apply(o *server.Options) {
	if s.serverTLS != nil {
		o.TLS, o.TLSConfig, o.TLSTimeout = true, s.serverTLS, 2
		o.TLSVerify = s.MutualTLS
	}
	if s.operator != nil {
		o.TrustedOperators = []*jwt.OperatorClaims{s.operator}
		o.SystemAccount = s.system
		o.AccountResolver = s.resolver
	}
}

// ClientOptions are the nats.go options of a client that holds the right
// material: the CA, the client certificate under MutualTLS, the .creds
// file.
func (s *Security) ClientOptions() []nats.Option {
	var o []nats.Option
	if s.CA != "" {
		o = append(o, nats.RootCAs(s.CA))
	}
	if s.MutualTLS {
		o = append(o, nats.ClientCert(s.ClientCert, s.ClientKey))
	}
	if s.Creds != "" {
		o = append(o, nats.UserCredentials(s.Creds))
	}
	return o
}

// makeTLS writes a CA, a server certificate for 127.0.0.1 and localhost,
// a client certificate, and a second CA; it keeps the server's TLS
// configuration.
func (s *Security) makeTLS(t TB, dir string) {
	t.Helper()
	ca, caKey := newCA(t, "omni test CA")
	other, _ := newCA(t, "another CA")
	s.CA, s.OtherCA = writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.Raw), writePEM(t, dir, "other-ca.pem", "CERTIFICATE", other.Raw)
	srvDER, srvKey := newLeaf(t, ca, caKey, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	cliDER, cliKey := newLeaf(t, ca, caKey, "omni client", x509.ExtKeyUsageClientAuth)
	s.ClientCert = writePEM(t, dir, "client.pem", "CERTIFICATE", cliDER)
	s.ClientKey = writePEM(t, dir, "client-key.pem", "PRIVATE KEY", marshalKey(t, cliKey))
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	s.serverTLS = &tls.Config{MinVersion: tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}}}
	if s.MutualTLS {
		s.serverTLS.ClientAuth, s.serverTLS.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
}

func newCA(t TB, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	return cert, key
}

// newLeaf returns a certificate for name (an IP address gets an IP SAN
// and localhost) signed by ca, and its key.
func newLeaf(t TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses, tmpl.DNSNames = []net.IP{ip}, []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	return der, key
}

func marshalKey(t TB, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	b, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	return b
}

func writePEM(t TB, dir, name, kind string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatalf("jstest: %v", err)
	}
	return p
}

// makeJWT makes an operator, its system account, one account with
// JetStream and a user of it (Creds), and a user of an account the
// operator never signed (OtherCreds).
func (s *Security) makeJWT(t TB, dir string) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatalf("jstest: %v", err)
		}
	}
	okp, err := nkeys.CreateOperator()
	must(err)
	opub, err := okp.PublicKey()
	must(err)
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "omni-test"
	ojwt, err := oc.Encode(okp)
	must(err)
	s.operator, err = jwt.DecodeOperatorClaims(ojwt)
	must(err)
	s.resolver = &server.MemAccResolver{}
	account := func(name string, signer nkeys.KeyPair, js bool) (nkeys.KeyPair, string) {
		kp, err := nkeys.CreateAccount()
		must(err)
		pub, err := kp.PublicKey()
		must(err)
		ac := jwt.NewAccountClaims(pub)
		ac.Name = name
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		aj, err := ac.Encode(signer)
		must(err)
		if signer == okp {
			must(s.resolver.Store(pub, aj))
		}
		return kp, pub
	}
	_, s.system = account("SYS", okp, false)
	akp, apub := account("TEAM", okp, true)
	s.Account, s.account, s.dir = apub, akp, dir
	// An account signed by a key the operator does not know: its users
	// are refused.
	rogue, err := nkeys.CreateOperator()
	must(err)
	bkp, _ := account("ROGUE", rogue, true)
	user := func(file string, issuer nkeys.KeyPair) string {
		ukp, err := nkeys.CreateUser()
		must(err)
		upub, err := ukp.PublicKey()
		must(err)
		uc := jwt.NewUserClaims(upub)
		uc.Name = "alice"
		uj, err := uc.Encode(issuer)
		must(err)
		seed, err := ukp.Seed()
		must(err)
		creds, err := jwt.FormatUserConfig(uj, seed)
		must(err)
		p := filepath.Join(dir, file)
		must(os.WriteFile(p, creds, 0o600))
		return p
	}
	s.Creds = user("omni.creds", akp)
	s.OtherCreds = user("rogue.creds", bkp)
}

// Permissions are a user's NATS publish and subscribe permissions
// (subject lists).
type Permissions struct {
	PubAllow, PubDeny, SubAllow []string
}

// UserCreds writes a .creds file for a new user named name of Account
// with permissions p, and returns its path (Creds must have been wanted).
func (s *Security) UserCreds(t TB, name string, p Permissions) string {
	t.Helper()
	if s.account == nil {
		t.Fatalf("jstest: UserCreds without Creds")
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	uc.Pub.Allow.Add(p.PubAllow...)
	uc.Pub.Deny.Add(p.PubDeny...)
	uc.Sub.Allow.Add(p.SubAllow...)
	uj, err := uc.Encode(s.account)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	seed, _ := ukp.Seed()
	creds, err := jwt.FormatUserConfig(uj, seed)
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	f, err := os.CreateTemp(s.dir, name+"-*.creds")
	if err != nil {
		t.Fatalf("jstest: %v", err)
	}
	defer f.Close()
	if _, err := f.Write(creds); err != nil {
		t.Fatalf("jstest: %v", err)
	}
	return f.Name()
}

// ServerTLS returns a TLS configuration for a server on 127.0.0.1 whose
// certificate is signed by a CA made for the test (an Options.TLS for a
// store opened with Listen).
func ServerTLS(t TB) *tls.Config {
	t.Helper()
	ca, caKey := newCA(t, "omni test CA")
	der, key := newLeaf(t, ca, caKey, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	return &tls.Config{MinVersion: tls.VersionTLS13,
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}
