package rewrite

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Ticket is what the PreToolUse hook tells the filter of one rewritten
// call. It travels in a file under the omni home, named by the hash of a
// random token that only the rewritten command holds (`omni pipe --call
// TOKEN`): the command line says nothing a model could change, and a
// model that runs `omni pipe` itself (the allow rule omni init writes
// lets it) holds no ticket, so its text is recorded for no reader.
type Ticket struct {
	// Session and Agent name the reader (the payload's session_id and
	// agent_id).
	Session string `json:"session"`
	Agent   string `json:"agent,omitempty"`
	// Line is the agent's command line; Runner its last simple command,
	// the one the filter reads. Reply writes both with credentials
	// masked (redact.Text) unless KeepSecrets.
	Line   string `json:"line"`
	Runner string `json:"runner"`
	// Cwd is the payload's cwd (the project the reader works in).
	Cwd string `json:"cwd,omitempty"`
	// TimeoutMS is the host's timeout of the call, in milliseconds.
	TimeoutMS int `json:"timeout_ms"`
	// KeepSecrets is OMNI_KEEP_SECRETS=1 in the hook's environment (the
	// host's, which the command's own words cannot set).
	KeepSecrets bool `json:"keep_secrets,omitempty"`
	// Issued is when the hook wrote it.
	Issued time.Time `json:"issued"`
}

// TicketDir is the directory of the tickets under an omni home.
func TicketDir(home string) string { return filepath.Join(home, "pretool") }

// TicketTTL is how long an unredeemed ticket is kept: a call runs at most
// the host's maximum timeout (MaxBashTimeoutMS, unless raised) before the
// host moves it to the background, so a day is far past any filter start.
const TicketTTL = 24 * time.Hour

// ErrNoTicket: the token names no ticket (never issued, already redeemed,
// expired, or another home).
var ErrNoTicket = errors.New("no ticket for this token")

// tokenRe is a token's shape: 32 lowercase hex digits.
func validToken(t string) bool {
	if len(t) != 32 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func ticketPath(home, token string) string {
	h := sha256.Sum256([]byte(token))
	return filepath.Join(TicketDir(home), hex.EncodeToString(h[:16])+".json")
}

// Issue writes t under home and returns its token (32 hex digits, 128
// random bits). The directory is made 0700, the file 0600, created anew
// (never through a link). Tickets older than TicketTTL are removed now
// and then. Errors: the home cannot be written.
func Issue(home string, t Ticket) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b[:])
	dir := TicketDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is not a private directory", dir)
	}
	if t.Issued.IsZero() {
		t.Issued = time.Now().UTC()
	}
	data, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(ticketPath(home, token), os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return "", err
	}
	// no fsync: the filter reads the ticket moments later on the same
	// machine, and a crash in between loses the call anyway.
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	if b[0] < 8 { // about one call in 32
		sweepTickets(dir, t.Issued)
	}
	return token, nil
}

// Redeem reads and removes the ticket of token under home: a ticket is
// good once. Errors: ErrNoTicket for a token of the wrong shape or one
// that names no ticket, or an expired one; a read error otherwise.
func Redeem(home, token string, now time.Time) (Ticket, error) {
	if !validToken(token) {
		return Ticket{}, ErrNoTicket
	}
	p := ticketPath(home, token)
	claimed := p + ".redeemed"
	if err := os.Rename(p, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Ticket{}, ErrNoTicket
		}
		return Ticket{}, err
	}
	defer os.Remove(claimed)
	f, err := os.OpenFile(claimed, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return Ticket{}, err
	}
	defer f.Close()
	var t Ticket
	if err := json.NewDecoder(f).Decode(&t); err != nil {
		return Ticket{}, err
	}
	if now.Sub(t.Issued) > TicketTTL {
		return Ticket{}, ErrNoTicket
	}
	return t, nil
}

// sweepTickets removes tickets issued more than TicketTTL before now.
func sweepTickets(dir string, now time.Time) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		if !strings.HasSuffix(e.Name(), ".json") && !strings.HasSuffix(e.Name(), ".redeemed") {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > TicketTTL {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
