package ledger

import (
	"bytes"
	"cmp"
	"encoding/gob"
	"fmt"
	"slices"

	"github.com/omnictx/omni/events"
)

// Snapshot is the exported mirror of a Ledger's whole state, in a
// deterministic order (maps as sorted parallel slices), for checkpoints.
// srcIndex is not stored: it is exactly the inverse of Sources.
type Snapshot struct {
	Readers  []ShownSnapshot // sorted by Reader
	Projects []ShownSnapshot // sorted by Project
	Sources  []string
	Handles  []string // sorted; Blocks[i] belongs to Handles[i]
	Blocks   []Block
	Holders  []HolderSnapshot // sorted by Handle
	Owed     []OwedSnapshot   // sorted by Reader
	Last     events.Seq
	Pruned   int64
	// Purged is the newest gc cutoff folded (Pruned.Before), 0 if none.
	Purged events.Seq
	// Lost is the sequences recorded as unreadable, sorted.
	Lost []events.Seq
	// Forgotten is the handles whose bytes omni forget erased, sorted.
	Forgotten []string
}

// ShownSnapshot is one shown-set: a reader's or a project's.
type ShownSnapshot struct {
	Reader  events.Reader
	Project string
	Keys    []uint64 // sorted
	Srcs    []int32
	Times   []int64
}

// HolderSnapshot is the readers shown a marker naming Handle, in order.
type HolderSnapshot struct {
	Handle  string
	Readers []events.Reader
	Times   []int64
}

// OwedSnapshot is the debts of one reader (possibly none: an emptied map
// is kept as such).
type OwedSnapshot struct {
	Reader  events.Reader
	Handles []string // sorted
	N       []int
	Times   []int64
	// Keys are each debt's block line keys (nil: not recorded).
	Keys [][]uint64
}

func readerCmp(a, b events.Reader) int {
	return cmp.Or(cmp.Compare(a.Session, b.Session), cmp.Compare(a.Agent, b.Agent))
}

func snapShown(s shown) ShownSnapshot {
	var out ShownSnapshot
	out.Keys = make([]uint64, 0, len(s))
	for k := range s {
		out.Keys = append(out.Keys, k)
	}
	slices.Sort(out.Keys)
	out.Srcs = make([]int32, len(out.Keys))
	out.Times = make([]int64, len(out.Keys))
	for i, k := range out.Keys {
		out.Srcs[i], out.Times[i] = s[k].src, s[k].t
	}
	return out
}

func (x ShownSnapshot) shown() (shown, error) {
	if len(x.Srcs) != len(x.Keys) || len(x.Times) != len(x.Keys) {
		return nil, fmt.Errorf("ledger snapshot: shown-set lengths differ")
	}
	s := make(shown, len(x.Keys))
	for i, k := range x.Keys {
		s[k] = entry{src: x.Srcs[i], t: x.Times[i]}
	}
	return s, nil
}

// Snapshot copies the ledger's state into its exported mirror.
func (l *Ledger) Snapshot() Snapshot {
	var out Snapshot
	for r, s := range l.readers {
		sh := snapShown(s)
		sh.Reader = r
		out.Readers = append(out.Readers, sh)
	}
	slices.SortFunc(out.Readers, func(a, b ShownSnapshot) int { return readerCmp(a.Reader, b.Reader) })
	for p, s := range l.projects {
		sh := snapShown(s)
		sh.Project = p
		out.Projects = append(out.Projects, sh)
	}
	slices.SortFunc(out.Projects, func(a, b ShownSnapshot) int { return cmp.Compare(a.Project, b.Project) })
	out.Sources = slices.Clone(l.sources)
	for h := range l.blocks {
		out.Handles = append(out.Handles, h)
	}
	slices.Sort(out.Handles)
	for _, h := range out.Handles {
		out.Blocks = append(out.Blocks, l.blocks[h])
	}
	for h, hs := range l.holders {
		x := HolderSnapshot{Handle: h}
		for _, y := range hs {
			x.Readers = append(x.Readers, y.r)
			x.Times = append(x.Times, y.t)
		}
		out.Holders = append(out.Holders, x)
	}
	slices.SortFunc(out.Holders, func(a, b HolderSnapshot) int { return cmp.Compare(a.Handle, b.Handle) })
	for r, m := range l.owed {
		x := OwedSnapshot{Reader: r}
		for h := range m {
			x.Handles = append(x.Handles, h)
		}
		slices.Sort(x.Handles)
		for _, h := range x.Handles {
			x.N = append(x.N, m[h].n)
			x.Times = append(x.Times, m[h].t)
			x.Keys = append(x.Keys, m[h].keys)
		}
		out.Owed = append(out.Owed, x)
	}
	slices.SortFunc(out.Owed, func(a, b OwedSnapshot) int { return readerCmp(a.Reader, b.Reader) })
	out.Last, out.Pruned, out.Purged = l.last, l.pruned, l.purged
	if len(l.lost) > 0 {
		out.Lost = l.LostSeqs()
	}
	for h := range l.forgotten {
		out.Forgotten = append(out.Forgotten, h)
	}
	slices.Sort(out.Forgotten)
	return out
}

// FromSnapshot returns the ledger whose state x mirrors.
func FromSnapshot(x Snapshot) (*Ledger, error) {
	l := New()
	for _, sh := range x.Readers {
		s, err := sh.shown()
		if err != nil {
			return nil, err
		}
		l.readers[sh.Reader] = s
	}
	for _, sh := range x.Projects {
		s, err := sh.shown()
		if err != nil {
			return nil, err
		}
		l.projects[sh.Project] = s
	}
	if len(x.Sources) == 0 || x.Sources[0] != "" {
		return nil, fmt.Errorf("ledger snapshot: sources do not start with \"\"")
	}
	l.sources = slices.Clone(x.Sources)
	l.srcIndex = make(map[string]int32, len(l.sources))
	for i, s := range l.sources {
		if _, dup := l.srcIndex[s]; dup {
			return nil, fmt.Errorf("ledger snapshot: source %q twice", s)
		}
		l.srcIndex[s] = int32(i)
	}
	check := func(s shown) error {
		for _, e := range s {
			if e.src < 0 || int(e.src) >= len(l.sources) {
				return fmt.Errorf("ledger snapshot: source index %d out of range", e.src)
			}
		}
		return nil
	}
	for _, s := range l.readers {
		if err := check(s); err != nil {
			return nil, err
		}
	}
	for _, s := range l.projects {
		if err := check(s); err != nil {
			return nil, err
		}
	}
	if len(x.Handles) != len(x.Blocks) {
		return nil, fmt.Errorf("ledger snapshot: handles and blocks differ in length")
	}
	for i, h := range x.Handles {
		l.blocks[h] = x.Blocks[i]
	}
	for _, x := range x.Holders {
		if len(x.Readers) != len(x.Times) {
			return nil, fmt.Errorf("ledger snapshot: holder lengths differ")
		}
		hs := make([]holder, len(x.Readers))
		for i := range hs {
			hs[i] = holder{r: x.Readers[i], t: x.Times[i]}
		}
		l.holders[x.Handle] = hs
	}
	for _, x := range x.Owed {
		if len(x.Handles) != len(x.N) || len(x.Handles) != len(x.Times) || (x.Keys != nil && len(x.Keys) != len(x.Handles)) {
			return nil, fmt.Errorf("ledger snapshot: debt lengths differ")
		}
		m := make(map[string]debt, len(x.Handles))
		for i, h := range x.Handles {
			m[h] = debt{n: x.N[i], t: x.Times[i]}
			if x.Keys != nil && len(x.Keys[i]) > 0 {
				m[h] = debt{n: x.N[i], t: x.Times[i], keys: x.Keys[i]}
			}
		}
		l.owed[x.Reader] = m
	}
	l.last, l.pruned, l.purged = x.Last, x.Pruned, x.Purged
	if len(x.Lost) > 0 {
		l.lost = make(map[events.Seq]bool, len(x.Lost))
		for _, q := range x.Lost {
			l.lost[q] = true
		}
	}
	for _, h := range x.Forgotten {
		if l.forgotten == nil {
			l.forgotten = map[string]bool{}
		}
		l.forgotten[h] = true
	}
	return l, nil
}

// MarshalBinary encodes the ledger's whole state (gob of Snapshot).
func (l *Ledger) MarshalBinary() ([]byte, error) { return l.Snapshot().Encode() }

// Encode is what MarshalBinary returns for the state x mirrors: a caller
// can take the Snapshot under its lock and encode it outside.
func (x Snapshot) Encode() ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(x); err != nil {
		return nil, fmt.Errorf("ledger snapshot: %w", err)
	}
	return b.Bytes(), nil
}

// UnmarshalBinary replaces the ledger's state with what MarshalBinary
// encoded. On error the ledger is unchanged.
func (l *Ledger) UnmarshalBinary(data []byte) error {
	var x Snapshot
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&x); err != nil {
		return fmt.Errorf("ledger snapshot: %w", err)
	}
	n, err := FromSnapshot(x)
	if err != nil {
		return err
	}
	*l = *n
	return nil
}
