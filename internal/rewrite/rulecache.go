package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/omnictx/omni/redact"
)

// The PreToolUse hook runs as a new process on every Bash call, and a
// runner line needs the merged permission rules of up to seven settings
// files. LoadCached keeps the merged rules of one set of files in one
// small file under the omni home and trusts it only while every settings
// file still has the stamp (device, inode, size, modification and change
// times) it had when the rules were read, and was last changed well
// before that read: a file written again within the file system's
// timestamp resolution keeps its times, so a file changed less than
// RacyWindow before the read is read again on every call until it settles.

// RacyWindow is how long before a read a settings file must have been last
// changed for the rules read from it to be cached: wider than the
// coarsest timestamp clock of the file systems a home sits on (FAT and
// exFAT store modification times in 2-second steps; Linux stamps files
// from a clock that advances once per scheduler tick, 1–10 ms).
const RacyWindow = 3 * time.Second

// cacheVersion is the first line of a rules cache file; a file with
// another first line is ignored (and replaced).
const cacheVersion = "omni-rules 2"

// cacheSuffix ends the name of a rules cache file in TicketDir.
const cacheSuffix = ".rules"

// LoadCached returns what Load(s) returns, read from the rules cache
// under home when every file of s is unchanged since the cache was
// written (see RacyWindow), else through Load, then written to the cache
// when every file has settled and no rule holds a credential (holdsSecret:
// those are read on every call). now is the time of the call. A cache that
// cannot be read, parsed or written is ignored; home "" reads through
// Load, and so does Windows, whose file modes cannot show the cache
// private (the rewrite is refused there: PathNameOK). Errors: those of
// Load (ErrSettings), never cached.
func LoadCached(home string, s Sources, now time.Time) (*Rules, error) {
	if home == "" || runtime.GOOS == "windows" {
		return Load(s)
	}
	files := settingsFiles(s)
	p := rulesCachePath(home, files)
	if r, ok := readRulesCache(p, files); ok {
		return r, nil
	}
	stamps := make([]string, len(files))
	settled := true
	for i, f := range files {
		st, changed, ok := stampOf(f.path)
		if !ok {
			settled = false
		}
		stamps[i] = st
		if !changed.IsZero() && now.Sub(changed) < RacyWindow {
			settled = false
		}
	}
	r, err := Load(s)
	if err != nil {
		return nil, err
	}
	if settled && holdsSecret(r) {
		// rule 2: a credential in a rule (Claude Code keeps allowed
		// commands verbatim) is never copied into the omni home; these
		// files are read on every call, and a cache written for them
		// before goes.
		_ = os.Remove(p)
		return r, nil
	}
	if settled {
		for i, f := range files {
			// a file that changed while Load read it is caught by the next
			// call: the stamp written is the one taken before the read.
			if st, _, ok := stampOf(f.path); !ok || st != stamps[i] {
				return r, nil
			}
		}
		writeRulesCache(p, home, stamps, r)
	}
	return r, nil
}

// holdsSecret reports whether a rule of r (tool or content) or the path
// of a file it was read from holds a value the redaction stage would
// replace (redact.Text).
func holdsSecret(r *Rules) bool {
	for _, l := range [][]Rule{r.Deny, r.Ask, r.Allow} {
		for _, rl := range l {
			if _, n := redact.Text(rl.Tool + "(" + rl.Content + ")"); n > 0 {
				return true
			}
		}
	}
	for _, f := range r.Files {
		if _, n := redact.Text(f); n > 0 {
			return true
		}
	}
	return false
}

// rulesCachePath names the cache file of one list of settings files: the
// hash of their paths and roles, so two projects never share a cache.
func rulesCachePath(home string, files []settingsFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%q %t %t\n", f.path, f.allow, f.managedSet)
	}
	return filepath.Join(TicketDir(home), hex.EncodeToString(h.Sum(nil)[:12])+cacheSuffix)
}

// stampOf returns the stamp of the file at p as the cache records it
// ("-" for a file that does not exist), and the later of its modification
// and change times (zero for a missing file). ok is false when p cannot be
// examined (then nothing is cached).
func stampOf(p string) (stamp string, changed time.Time, ok bool) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "-", time.Time{}, true
	}
	if err != nil {
		return "", time.Time{}, false
	}
	return fileStamp(p, fi)
}

// A rules cache file is cacheVersion, one "s STAMP" line per settings
// file in settingsFiles order, then "m" when ManagedOnly, one "f N:PATH"
// line per file of Files, one "deny|ask|allow I N:TOOL N:CONTENT" line
// per rule (I: the index in Files of the file it came from; N: the length
// in bytes of the string after the colon, which may hold any byte,
// newlines included), and "end". Strings are length-prefixed so that
// reading one is a slice, not an unquote.

// maxCacheBytes bounds the cache file read (a settings file of a few
// thousand rules is far below it).
const maxCacheBytes = 1 << 20

// readRulesCache returns the rules of the cache file at p when its stamps
// are those of files now. Any doubt answers ok false.
func readRulesCache(p string, files []settingsFile) (*Rules, bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || fi.Size() > maxCacheBytes {
		return nil, false
	}
	b := make([]byte, fi.Size()+1)
	n, _ := io.ReadFull(f, b)
	if int64(n) != fi.Size() {
		return nil, false
	}
	c := cacheReader{b: b[:n], ok: true}
	if c.line() != cacheVersion {
		return nil, false
	}
	for _, sf := range files {
		st, _, ok := stampOf(sf.path)
		if !ok || c.line() != "s "+st {
			return nil, false
		}
	}
	r := &Rules{}
	for c.ok && c.at < len(c.b) {
		switch kind := c.word(); kind {
		case "end":
			return r, c.ok && c.newline() && c.at == len(c.b)
		case "m":
			r.ManagedOnly = c.newline()
		case "f":
			r.Files = append(r.Files, c.str())
			c.newline()
		case "deny", "ask", "allow":
			i := c.num()
			rl := Rule{Tool: c.str(), Content: c.str()}
			c.newline()
			if i < 0 || i >= len(r.Files) {
				return nil, false
			}
			rl.From = r.Files[i]
			switch kind {
			case "deny":
				r.Deny = append(r.Deny, rl)
			case "ask":
				r.Ask = append(r.Ask, rl)
			default:
				r.Allow = append(r.Allow, rl)
			}
		default:
			return nil, false
		}
	}
	return nil, false // no end line: a torn or foreign file
}

// cacheReader walks a rules cache file; ok turns false at the first byte
// out of place and stays false.
type cacheReader struct {
	b  []byte
	at int
	ok bool
}

// line returns the text up to the next newline and moves past it.
func (c *cacheReader) line() string {
	i := bytes.IndexByte(c.b[c.at:], '\n')
	if i < 0 {
		c.ok = false
		return ""
	}
	s := string(c.b[c.at : c.at+i])
	c.at += i + 1
	return s
}

// word returns the text up to the next space or newline, and moves past
// a space.
func (c *cacheReader) word() string {
	rest := c.b[c.at:]
	i := bytes.IndexAny(rest, " \n")
	if i < 0 {
		c.ok = false
		return ""
	}
	s := string(rest[:i])
	c.at += i
	if rest[i] == ' ' {
		c.at++
	}
	return s
}

// num reads a decimal number and the space after it.
func (c *cacheReader) num() int {
	n, err := strconv.Atoi(c.word())
	if err != nil {
		c.ok = false
		return -1
	}
	return n
}

// str reads "N:" and the N bytes after it, and a space if one follows.
func (c *cacheReader) str() string {
	rest := c.b[c.at:]
	i := bytes.IndexByte(rest, ':')
	if i <= 0 || i > 7 {
		c.ok = false
		return ""
	}
	n, err := strconv.Atoi(string(rest[:i]))
	if err != nil || n < 0 || n > len(rest)-i-1 {
		c.ok = false
		return ""
	}
	s := string(rest[i+1 : i+1+n])
	c.at += i + 1 + n
	if c.at < len(c.b) && c.b[c.at] == ' ' {
		c.at++
	}
	return s
}

// newline moves past a newline; false (and ok false) when there is none.
func (c *cacheReader) newline() bool {
	if c.at >= len(c.b) || c.b[c.at] != '\n' {
		c.ok = false
		return false
	}
	c.at++
	return true
}

// writeRulesCache writes r with stamps to p, through a new file renamed
// into place, in the private ticket directory of home. Errors are
// ignored: the next call reads the settings files again.
func writeRulesCache(p, home string, stamps []string, r *Rules) {
	var b bytes.Buffer
	b.WriteString(cacheVersion + "\n")
	for _, st := range stamps {
		b.WriteString("s " + st + "\n")
	}
	if r.ManagedOnly {
		b.WriteString("m\n")
	}
	index := make(map[string]int, len(r.Files))
	str := func(s string) { b.WriteString(strconv.Itoa(len(s)) + ":" + s) }
	for i, f := range r.Files {
		index[f] = i
		b.WriteString("f ")
		str(f)
		b.WriteString("\n")
	}
	for _, l := range []struct {
		kind  string
		rules []Rule
	}{{"deny", r.Deny}, {"ask", r.Ask}, {"allow", r.Allow}} {
		for _, rl := range l.rules {
			i, ok := index[rl.From]
			if !ok {
				return // a rule of no file read: never cached
			}
			b.WriteString(l.kind + " " + strconv.Itoa(i) + " ")
			str(rl.Tool)
			b.WriteString(" ")
			str(rl.Content)
			b.WriteString("\n")
		}
	}
	b.WriteString("end\n")
	dir := TicketDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return
	}
	tmp, err := os.CreateTemp(dir, ".rules-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
}
