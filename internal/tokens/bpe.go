package tokens

import (
	"hash/maphash"

	"github.com/tiktoken-go/tokenizer"
)

// ranks is an encoding's ASCII tokens: token bytes -> rank. In the
// tiktoken encodings a token's merge rank is its id, so the table is read
// from the library's own Decode of every id; only tokens of ASCII bytes
// are kept, since asciiTokens merges only pre-tokens of ASCII bytes and
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
// linear probing: the tokens' bytes are one string (data), each slot
// holds where its token is in data and its rank. It is built once and
// read-only after; a token of more than maxLongToken bytes goes to over.
type longRanks struct {
	data  string
	slots []longSlot // a power of two, at most half full
	seed  maphash.Seed
	over  map[string]uint32
	n     int // tokens held
}

// longSlot is one token of longRanks: at is its offset in data shifted
// left 8 bits, or'ed with its length (0 for an empty slot); val is its
// rank (the low rankBits) under tagBits of its hash, so most probes of a
// slot holding another token end without reading data.
type longSlot struct {
	at, val uint32
}

const (
	maxLongToken = 255
	rankBits     = 18 // o200k_base's ranks are under 200,019
	tagBits      = 32 - rankBits
)

// newLongRanks builds the table of toks (every rank under 1<<rankBits),
// whose texts are size bytes in all.
func newLongRanks(toks []rankedToken, size int) longRanks {
	slots := 1024
	for slots < 2*len(toks) {
		slots <<= 1
	}
	t := longRanks{slots: make([]longSlot, slots), seed: maphash.MakeSeed(), n: len(toks)}
	data := make([]byte, 0, size)
	for _, tok := range toks {
		if len(tok.text) > maxLongToken || len(data)+len(tok.text) >= 1<<24 || tok.rank >= 1<<rankBits {
			if t.over == nil {
				t.over = make(map[string]uint32)
			}
			t.over[tok.text] = tok.rank
			continue
		}
		h := maphash.String(t.seed, tok.text)
		i := int(h) & (slots - 1)
		for t.slots[i].at != 0 {
			i = (i + 1) & (slots - 1)
		}
		t.slots[i] = longSlot{at: uint32(len(data))<<8 | uint32(len(tok.text)), val: uint32(h>>(64-tagBits))<<rankBits | tok.rank}
		data = append(data, tok.text...)
	}
	t.data = string(data)
	return t
}

// get returns the rank of the token s (three bytes or more), noRank when
// s is none.
func (t *longRanks) get(s string) uint32 {
	if len(s) > maxLongToken || t.over != nil {
		if k, ok := t.over[s]; ok {
			return k
		}
	}
	h := maphash.String(t.seed, s)
	tag := uint32(h >> (64 - tagBits))
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := t.slots[i]
		if sl.at == 0 {
			return noRank
		}
		if sl.val>>rankBits == tag && int(sl.at&0xff) == len(s) && t.data[sl.at>>8:sl.at>>8+sl.at&0xff] == s {
			return sl.val & (1<<rankBits - 1)
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
