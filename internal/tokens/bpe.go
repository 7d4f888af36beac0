package tokens

import (
	"github.com/tiktoken-go/tokenizer"
)

// ranks is an encoding's ASCII tokens: token bytes -> rank. In the
// tiktoken encodings a token's merge rank is its id, so the table is read
// from the library's own Decode of every id; only tokens of ASCII bytes
// are kept, since tokens merges only pre-tokens of ASCII bytes and
// every part of those is ASCII too. BenchmarkLoadRanks measures its build
// (the README's "Tokens and recall" gives the figures).
type ranks struct {
	// pair is the rank of each two-byte ASCII token, at a<<7|b (noRank
	// for a pair that is no token): the first look-ups of every merge.
	pair []uint32
	// long is the rank of each token of three bytes or more.
	long longRanks
}

// longRanks is a hash table of tokens to ranks, open addressing with
// linear probing: each slot holds its token's first 8 bytes, where the
// rest is in data (the tokens' bytes past their eighth, one string), its
// length and its rank, so a token of up to 8 bytes is found in one read
// of the slots. It is built once and read-only after; a token of more
// than maxLongToken bytes goes to over.
type longRanks struct {
	data  string
	slots []longSlot // a power of two, at most half full
	over  map[string]uint32
	n     int // tokens held
}

// longSlot is one token of longRanks: head is its first 8 bytes (little
// endian, zero past its end); rest is where its bytes past the eighth are
// in data shifted left 8 bits, or'ed with its length (0 for an empty
// slot); rank is its rank.
type longSlot struct {
	head       uint64
	rest, rank uint32
}

// maxLongToken is the longest token longRanks keeps in its slots, in
// bytes (the length's 8 bits).
const maxLongToken = 255

// newLongRanks builds the table of toks, whose texts are size bytes in
// all.
func newLongRanks(toks []rankedToken, size int) longRanks {
	slots := 1024
	for slots < 2*len(toks) {
		slots <<= 1
	}
	t := longRanks{slots: make([]longSlot, slots), n: len(toks)}
	data := make([]byte, 0, size)
	for _, tok := range toks {
		if len(tok.text) > maxLongToken || len(data)+len(tok.text) >= 1<<24 {
			if t.over == nil {
				t.over = make(map[string]uint32)
			}
			t.over[tok.text] = tok.rank
			continue
		}
		i := int(hashToken(tok.text)) & (slots - 1)
		for t.slots[i].rest != 0 {
			i = (i + 1) & (slots - 1)
		}
		head, tail := headOf(tok.text)
		t.slots[i] = longSlot{head: head, rest: uint32(len(data))<<8 | uint32(len(tok.text)), rank: tok.rank}
		data = append(data, tail...)
	}
	t.data = string(data)
	return t
}

// headOf returns s's first 8 bytes as a little-endian word (zero past its
// end) and the bytes after them.
func headOf(s string) (uint64, string) {
	if len(s) >= 8 {
		return load64(s), s[8:]
	}
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return w, ""
}

func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hashToken hashes s for longRanks: a fixed hash (the table's contents are
// the encoding's, not an input's, so no seed is needed against crafted
// collisions), words multiplied in and a final mix of the bits.
func hashToken(s string) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(s)) * m
	for len(s) >= 8 {
		h = (h ^ load64(s)) * m
		h ^= h >> 32
		s = s[8:]
	}
	var w uint64
	switch {
	case len(s) >= 4:
		w = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			(uint64(s[len(s)-4])|uint64(s[len(s)-3])<<8|uint64(s[len(s)-2])<<16|uint64(s[len(s)-1])<<24)<<32
	case len(s) > 0:
		w = uint64(s[0]) | uint64(s[len(s)/2])<<8 | uint64(s[len(s)-1])<<16
	}
	h = (h ^ w) * 0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	return h ^ h>>29
}

// get returns the rank of the token s (three bytes or more), noRank when
// s is none.
func (t *longRanks) get(s string) uint32 {
	if len(s) > maxLongToken || t.over != nil {
		if k, ok := t.over[s]; ok {
			return k
		}
	}
	head, tail := headOf(s)
	mask := len(t.slots) - 1
	for i := int(hashToken(s)) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.rest == 0 {
			return noRank
		}
		if sl.head == head && int(sl.rest&0xff) == len(s) && (tail == "" || t.data[sl.rest>>8:int(sl.rest>>8)+len(tail)] == tail) {
			return sl.rank
		}
	}
}

// maxIDGap is how many consecutive ids without a token end the scan of an
// encoding's ids: the encodings number their tokens densely from 0 (the
// ids without one are a few reserved beside the special tokens), so a gap
// this long is past the last.
const maxIDGap = 1 << 12

// loadRanks reads codec's ASCII tokens by decoding every id from 0 until
// maxIDGap ids in a row decode to nothing. Decoding makes codec build and
// keep a table of every token (some 3 MB for o200k_base): pass a codec
// that is dropped after.
func loadRanks(codec tokenizer.Codec) *ranks {
	r := &ranks{pair: make([]uint32, 1<<14)}
	for i := range r.pair {
		r.pair[i] = noRank
	}
	long := make([]rankedToken, 0, 1<<17) // o200k_base has 125,353 ASCII tokens of 3 bytes or more
	size := 0
	ids := make([]uint, 1)
	for id, gap := uint(0), 0; gap < maxIDGap; id++ {
		ids[0] = id
		tok, err := codec.Decode(ids)
		if err != nil || tok == "" {
			gap++
			continue
		}
		gap = 0
		if !isASCII(tok) {
			continue
		}
		switch len(tok) {
		case 1:
		case 2:
			r.pair[int(tok[0])<<7|int(tok[1])] = uint32(id)
		default:
			long = append(long, rankedToken{tok, uint32(id)})
			size += len(tok)
		}
	}
	r.long = newLongRanks(long, size)
	return r
}

// rankedToken is a token and its rank.
type rankedToken struct {
	text string
	rank uint32
}

// noRank marks a pair of parts whose concatenation is no token.
const noRank = ^uint32(0)

// rank returns the rank of the token s, noRank when s is none.
func (r *ranks) rank(s string) uint32 {
	if len(s) == 2 {
		return r.pair[int(s[0])<<7|int(s[1])]
	}
	return r.long.get(s)
}

// tokens returns how many tokens the byte-pair encoding of the pre-token p
// (ASCII, non-empty) has: one when p is a token, else the parts left when,
// starting from single bytes, the adjacent pair whose concatenation has
// the lowest rank (the leftmost of equals) is merged until no pair's
// concatenation is a token.
func (r *ranks) tokens(p string) int {
	if len(p) == 1 || r.rank(p) != noRank {
		return 1
	}
	if len(p) <= maxScanMerge {
		return r.mergeScan(p)
	}
	return r.mergeHeap(p)
}

// maxScanMerge is the longest pre-token merged by rescanning its pairs
// after every merge (quadratic, but on the stack); longer ones go to a
// heap of candidate merges (n log n).
const maxScanMerge = 64

// mergeScan is tokens for a pre-token of 2..maxScanMerge bytes: start[i]
// is where part i begins, pair[i] the rank of parts i and i+1 joined.
func (r *ranks) mergeScan(p string) int {
	var start [maxScanMerge + 1]int32
	var pair [maxScanMerge]uint32
	n := len(p) // parts
	for i := 0; i <= n; i++ {
		start[i] = int32(i)
	}
	for i := 0; i+1 < n; i++ {
		pair[i] = r.rank(p[i : i+2])
	}
	for n > 1 {
		best := 0
		for i := 1; i+1 < n; i++ {
			if pair[i] < pair[best] {
				best = i
			}
		}
		if pair[best] == noRank {
			break
		}
		// Join parts best and best+1: drop boundary best+1.
		copy(start[best+1:n], start[best+2:n+1])
		copy(pair[best+1:n-1], pair[best+2:n])
		n--
		if best+1 < n {
			pair[best] = r.rank(p[start[best]:start[best+2]])
		} else {
			pair[best] = noRank
		}
		if best > 0 {
			pair[best-1] = r.rank(p[start[best-1]:start[best+1]])
		}
	}
	return n
}

// mergeHeap is tokens for a long pre-token: the parts are a linked list of
// their start offsets, and the candidate merges a min-heap ordered by rank
// then offset (so the leftmost of equal ranks merges first); a candidate
// whose part has since changed is skipped when popped.
func (r *ranks) mergeHeap(p string) int {
	n := len(p)
	next := make([]int32, n+1) // next[i]: start of the part after the part at i (n: the end)
	prev := make([]int32, n+1)
	pair := make([]uint32, n+1) // rank of the part at i joined with the next
	for i := 0; i <= n; i++ {
		next[i], prev[i], pair[i] = int32(i+1), int32(i-1), noRank
	}
	joined := func(i int32) uint32 {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		return r.rank(p[i:next[j]])
	}
	h := make(mergeHeap, 0, n)
	for i := 0; i+1 < n; i++ {
		if k := joined(int32(i)); k != noRank {
			pair[i] = k
			h = append(h, candidate{k, int32(i)})
		}
	}
	h.init()
	parts := n
	for len(h) > 0 {
		top := h.pop()
		i := top.at
		if pair[i] != top.rank {
			continue // stale: the part at i changed since
		}
		j := next[i]
		k := next[j]
		pair[j] = noRank
		next[i] = k
		if int(k) <= n {
			prev[k] = i
		}
		parts--
		for _, b := range [2]int32{i, prev[i]} {
			if b < 0 {
				continue
			}
			pair[b] = joined(b)
			if pair[b] != noRank {
				h.push(candidate{pair[b], b})
			}
		}
	}
	return parts
}

// candidate is a merge of the part at offset at with the next, whose
// token has rank.
type candidate struct {
	rank uint32
	at   int32
}

// mergeHeap is a binary min-heap of candidates by (rank, at).
type mergeHeap []candidate

func (h mergeHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].at < h[b].at
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s.less(i, up) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

func (h *mergeHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h mergeHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
