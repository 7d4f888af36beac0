package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minio/highwayhash"
)

// The message block format of the embedded server's file store, as this
// package reads it to find damage the server cannot survive (a sequence
// field that is not the record's makes nats-server 2.15.2 and 2.15.3 loop
// and allocate without bound while recovering, measured 2026-12-01) and
// to repair it. A block file <index>.blk is a run of records:
//
//	length(4, bit 31: has headers) sequence(8) time(8) subject length(2)
//	subject [header length(4) header] payload checksum(8)
//
// The checksum is the 64-bit HighwayHash, keyed with the SHA-256 of
// "<stream>-<index>", of the sequence and time fields, the subject, the
// header (without its length) and the payload. Sequence bit 63 marks an
// erased record, bit 62 a tombstone; neither is judged here.
const (
	recHeader   = 22
	recChecksum = 8
	hasHdrBit   = 1 << 31
	erasedBit   = 1 << 63
	tombBit     = 1 << 62
)

// DamagedFile is the marker a store start leaves when it found the store
// unsafe to open (Options.Dir/damaged.json); while it stands Open fails
// at once with ErrDamagedStore. RepairBlocks removes it.
const DamagedFile = "damaged.json"

// ErrDamagedStore: the store's files are damaged in a way the embedded
// server cannot recover from by itself (a record's sequence field, or a
// start that ran past its deadline or memory ceiling); the store was not
// opened. 'omni gc --repair' (RepairBlocks, then a scan) recovers it.
var ErrDamagedStore = errors.New("the store's files are damaged")

// Damage is one damaged record of a message block.
type Damage struct {
	// File is the block file; Offset the record's byte offset in it.
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	// Seq is the record's sequence as far as it is known (0 when not),
	// Stored the sequence field as found.
	Seq    uint64 `json:"seq,omitempty"`
	Stored uint64 `json:"stored"`
	// Repairable: only the sequence field is wrong (the checksum verifies
	// with Seq in it), so the record can be restored exactly.
	Repairable bool `json:"repairable"`
	// Why says what is wrong.
	Why string `json:"why"`
}

// Marker is the content of DamagedFile.
type Marker struct {
	Time   time.Time `json:"time"`
	Why    string    `json:"why"`
	Damage []Damage  `json:"damage,omitempty"`
}

// ReadMarker returns the damage marker of the store in dir, if any.
func ReadMarker(dir string) (Marker, bool) {
	var m Marker
	b, err := os.ReadFile(filepath.Join(dir, DamagedFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return Marker{}, false
	}
	return m, true
}

// writeMarker records why the store in dir is unsafe to open.
func writeMarker(dir, why string, dmg []Damage) {
	b, _ := json.MarshalIndent(Marker{Time: time.Now().UTC(), Why: why, Damage: dmg}, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, DamagedFile), b, 0o600)
}

// blockDir is the stream's message directory under a store directory.
func blockDir(dir string) string {
	return filepath.Join(dir, "js", "jetstream", "$G", "streams", StreamName, "msgs")
}

// blockFiles lists the stream's block files in index order.
func blockFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(blockDir(dir), "*.blk"))
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return blockIndex(files[i]) < blockIndex(files[j]) })
	return files, nil
}

func blockIndex(path string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimSuffix(filepath.Base(path), ".blk"), 10, 64)
	return n
}

// record is one record of a block as scanned.
type record struct {
	off, end int    // byte range in the block
	seq      uint64 // the sequence field (restored when repairable)
	ok       bool   // the checksum verifies (after restoring)
	fixed    bool   // the sequence field was restored
	flagged  bool   // erased or tombstone: not judged
}

// scanBlock walks one block's records. prev is the last good sequence
// before the block (0 when unknown). It returns the records, the damage
// found and the last good sequence.
func scanBlock(path string, b []byte, prev uint64) ([]record, []Damage, uint64) {
	key := sha256.Sum256([]byte(fmt.Sprintf("%s-%d", StreamName, blockIndex(path))))
	le := binary.LittleEndian
	var recs []record
	var dmg []Damage
	sum := func(r record, seq uint64) bool {
		h, err := highwayhash.New64(key[:])
		if err != nil {
			return false
		}
		var st [16]byte
		le.PutUint64(st[0:], seq)
		copy(st[8:], b[r.off+12:r.off+20])
		h.Write(st[:])
		rl := r.end - r.off
		hasHdr := le.Uint32(b[r.off:])&hasHdrBit != 0
		slen := int(le.Uint16(b[r.off+20:]))
		p := r.off + recHeader
		if p+slen > r.off+rl-recChecksum {
			return false
		}
		h.Write(b[p : p+slen])
		p += slen
		if hasHdr {
			if p+4 > r.end-recChecksum {
				return false
			}
			hl := int(le.Uint32(b[p:]))
			p += 4
			if p+hl > r.end-recChecksum {
				return false
			}
			h.Write(b[p : p+hl])
			p += hl
		}
		h.Write(b[p : r.end-recChecksum])
		return string(h.Sum(nil)) == string(b[r.end-recChecksum:r.end])
	}
	for off := 0; off+recHeader <= len(b); {
		rl := int(le.Uint32(b[off:]) &^ hasHdrBit)
		if rl < recHeader+recChecksum || off+rl > len(b) {
			if rl == 0 && allZero(b[off:]) {
				break // preallocated tail
			}
			dmg = append(dmg, Damage{File: path, Offset: int64(off), Seq: prev + 1, Stored: le.Uint64(b[off+4:]),
				Why: fmt.Sprintf("record length %d does not fit the block (%d bytes left): the rest of the block is unreadable", rl, len(b)-off)})
			break
		}
		r := record{off: off, end: off + rl, seq: le.Uint64(b[off+4:])}
		if r.seq&(erasedBit|tombBit) != 0 {
			r.flagged = true
		} else {
			r.ok = sum(r, r.seq)
		}
		recs = append(recs, r)
		off += rl
	}
	// A record whose checksum fails is repairable when it verifies with the
	// sequence its neighbours imply (the one after the previous good
	// record, or the one before the next).
	for i := range recs {
		r := &recs[i]
		if r.flagged || r.ok {
			if r.ok {
				prev = r.seq
			}
			continue
		}
		var cands []uint64
		if prev > 0 {
			cands = append(cands, prev+1)
		}
		for j := i + 1; j < len(recs); j++ {
			if recs[j].ok {
				if s := recs[j].seq - uint64(j-i); s > 0 && recs[j].seq > uint64(j-i) {
					cands = append(cands, s)
				}
				break
			}
		}
		stored := r.seq
		for _, c := range cands {
			if c != stored && sum(*r, c) {
				r.seq, r.ok, r.fixed = c, true, true
				break
			}
		}
		d := Damage{File: path, Offset: int64(r.off), Seq: r.seq, Stored: stored, Repairable: r.fixed}
		switch {
		case r.fixed:
			d.Why = fmt.Sprintf("the sequence field reads %d where the record is %d", stored, r.seq)
			prev = r.seq
		case prev > 0 && stored != prev+1:
			d.Seq = prev + 1
			d.Why = fmt.Sprintf("checksum mismatch and the sequence field reads %d after %d", stored, prev)
			r.seq = prev + 1 // the place it holds, for the record of what was lost
			prev = r.seq
		default:
			// The sequence is plausible and only the content is damaged:
			// the server keeps the record and fails its reads (Check).
			d.Why = "checksum mismatch in the record's content"
		}
		dmg = append(dmg, d)
	}
	return recs, dmg, prev
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ScanBlocks reads every message block of the store in dir (an
// Options.Dir) and returns the damaged records: their checksums are
// verified, and a record that fails is judged by its sequence field. It
// reads the whole store (about the speed of a sequential read). Errors:
// the files'.
func ScanBlocks(dir string) ([]Damage, error) {
	files, err := blockFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []Damage
	var prev uint64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", f, err)
		}
		var dmg []Damage
		_, dmg, prev = scanBlock(f, b, prev)
		out = append(out, dmg...)
	}
	return out, nil
}

// fatal reports whether a damage keeps the server from starting safely:
// a sequence field that is not the record's (the server loops on it) or a
// record length that breaks the block's framing.
func (d Damage) fatal() bool {
	return d.Repairable || strings.HasPrefix(d.Why, "checksum mismatch and the sequence") || strings.HasPrefix(d.Why, "record length")
}

// scanCache is the file, in the store directory, that remembers blocks
// scanned clean (name → size:mtime), so a start reads only blocks that
// changed since (the last one, which appends grow).
const scanCache = "blocks.ok"

// preflight scans the blocks that changed since the last clean scan and
// returns the damage that would make the server unsafe to start.
func preflight(dir string) ([]Damage, error) {
	files, err := blockFiles(dir)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	seen := map[string]string{}
	if b, err := os.ReadFile(filepath.Join(dir, scanCache)); err == nil {
		_ = json.Unmarshal(b, &seen)
	}
	clean := map[string]string{}
	var fatal []Damage
	var prev uint64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		stamp := fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
		if seen[filepath.Base(f)] == stamp {
			clean[filepath.Base(f)] = stamp
			prev = 0 // unknown after a skipped block
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", f, err)
		}
		_, dmg, last := scanBlock(f, b, prev)
		prev = last
		bad := false
		for _, d := range dmg {
			if d.fatal() {
				fatal = append(fatal, d)
				bad = true
			}
		}
		if !bad {
			clean[filepath.Base(f)] = stamp
		}
	}
	if b, err := json.Marshal(clean); err == nil {
		_ = os.WriteFile(filepath.Join(dir, scanCache), b, 0o600)
	}
	return fatal, nil
}

// Recovery is what RepairBlocks did.
type Recovery struct {
	// Damage is what the scan found.
	Damage []Damage `json:"damage"`
	// MovedAside are the damaged block files, kept beside the new ones
	// as <name>.damaged-<unix time>.
	MovedAside []string `json:"moved_aside,omitempty"`
	// Restored counts records whose sequence field was restored (their
	// checksums verify), Kept every readable record written back, Dropped
	// the records that could not be read (their sequences, where known).
	Restored int      `json:"restored"`
	Kept     int      `json:"kept"`
	Dropped  []uint64 `json:"dropped,omitempty"`
	// Report is the file this recovery was recorded in.
	Report string `json:"report"`
}

// RepairBlocks recovers the store in dir from damaged message blocks,
// under the store lock (no server may run): every block with damage is
// moved aside and rewritten with each readable record, restoring the
// sequence field of records whose checksum verifies with the sequence
// their neighbours imply, and without the records that cannot be read
// (the server then counts them as missing; 'omni gc --repair' records
// them as lost). The stream's index is removed so that the server
// rebuilds it from the blocks, the damage marker is removed, and the
// recovery is recorded in dir/recovered-<unix time>.json. Errors:
// ErrLocked when the store is open; the files'.
func RepairBlocks(dir string) (Recovery, error) {
	var rec Recovery
	lock, err := takeLock(context.Background(), filepath.Join(dir, LockFile), 0)
	if err != nil {
		return rec, err
	}
	defer lock.Unlock()
	files, err := blockFiles(dir)
	if err != nil {
		return rec, err
	}
	now := time.Now().Unix()
	var prev uint64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return rec, fmt.Errorf("repair %s: %w", f, err)
		}
		recs, dmg, last := scanBlock(f, b, prev)
		prev = last
		rec.Damage = append(rec.Damage, dmg...)
		if len(dmg) == 0 {
			continue
		}
		var out []byte
		for _, r := range recs {
			if !r.ok && !r.flagged {
				if r.seq != 0 {
					rec.Dropped = append(rec.Dropped, r.seq)
				}
				continue
			}
			chunk := append([]byte(nil), b[r.off:r.end]...)
			if r.fixed {
				binary.LittleEndian.PutUint64(chunk[4:], r.seq)
				rec.Restored++
			}
			if !r.flagged {
				rec.Kept++
			}
			out = append(out, chunk...)
		}
		for _, d := range dmg {
			if strings.HasPrefix(d.Why, "record length") {
				rec.Dropped = append(rec.Dropped, d.Seq)
			}
		}
		aside := fmt.Sprintf("%s.damaged-%d", f, now)
		if err := os.Rename(f, aside); err != nil {
			return rec, fmt.Errorf("repair: move %s aside: %w", f, err)
		}
		rec.MovedAside = append(rec.MovedAside, aside)
		if err := os.WriteFile(f, out, 0o600); err != nil {
			return rec, fmt.Errorf("repair: write %s: %w", f, err)
		}
	}
	if len(rec.Damage) > 0 {
		// The stream's index names the old blocks' state: rebuilt from the
		// blocks at the next start.
		_ = os.Remove(filepath.Join(filepath.Dir(blockDir(dir)), "msgs", "index.db"))
	}
	_ = os.Remove(filepath.Join(dir, DamagedFile))
	_ = os.Remove(filepath.Join(dir, scanCache))
	rec.Report = filepath.Join(dir, fmt.Sprintf("recovered-%d.json", now))
	if len(rec.Damage) > 0 {
		b, _ := json.MarshalIndent(rec, "", "  ")
		if err := os.WriteFile(rec.Report, b, 0o600); err != nil {
			return rec, err
		}
	} else {
		rec.Report = ""
	}
	return rec, nil
}
