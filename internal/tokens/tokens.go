// Package tokens counts text in tokens, as a model's bill counts it, with
// a maintained BPE tokenizer library (github.com/tiktoken-go/tokenizer,
// whose encodings are embedded in the binary: no network at run time).
//
// A text is counted piece by piece: split at line ends and before each
// space-led word (pieceEnd), each piece encoded alone, the counts summed.
// A piece of ASCII bytes (nearly every piece of a tool's output) is split
// and byte-pair merged by this package (split.go, bpe.go) with the
// encoding's own ranks, to the library encoder's exact count at a fraction
// of its cost; any other piece goes to the library's encoder. Lines, and
// the pieces the library counts, are kept in a bounded cache, so a
// repeated line costs a look-up instead of an encoding. Encoding pieces
// alone can differ from encoding the whole text where the encoders'
// pre-split joins across a cut (a run of whitespace spanning a line end);
// README, "Tokens and recall", gives the difference measured on the shared
// corpus.
package tokens

import (
	"fmt"
	"hash/maphash"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
)

// Families maps the --tokenizer names to the encoding each counts with:
// "o200k" (the default: GPT-4o, GPT-4.1, o-series and later OpenAI models)
// and "cl100k" (GPT-4, GPT-3.5). Anthropic publishes no tokenizer for its
// current Claude models; their counts are of the same order as o200k's,
// which is why it is the default, but a Claude bill may differ by a few
// percent: the encoding's name is printed beside every token figure.
var Families = map[string]tokenizer.Encoding{
	"o200k":  tokenizer.O200kBase,
	"cl100k": tokenizer.Cl100kBase,
}

// DefaultFamily is the family New uses for "".
const DefaultFamily = "o200k"

// maxCached bounds the line cache, in entries; past it the cache is
// emptied and refilled (a 2-core machine's corpus run holds about 250,000
// distinct lines).
const maxCached = 1 << 19

// maxCachedBytes bounds the bytes of the line cache's texts: whole lines
// (up to maxCachedLine) and long pieces make entries far larger than a
// word, so the entry bound alone would let a long-running daemon hold
// hundreds of megabytes. Past it the cache is emptied and refilled.
const maxCachedBytes = 32 << 20

// Counter counts tokens with one encoding. It is safe for concurrent use.
// The encoding is loaded on the first Count, not by New: the library's
// vocabulary (some 20 ms and 7 MB for o200k_base on the development
// machine) before that Count, and then the ASCII rank table read from it
// (BenchmarkLoadRanks: some 30 ms, 4 MB kept) on a goroutine of its own,
// every piece going to the library's encoder until it is built: a first
// Count costs what it did before the table.
type Counter struct {
	enc tokenizer.Encoding
	// cl100k selects cl100k_base's pre-split for ASCII pieces, else
	// o200k_base's.
	cl100k bool
	once   sync.Once
	codec  tokenizer.Codec
	// ranks is the encoding's ASCII tokens (nil until built, or when the
	// codec failed to load); built is closed when the build ends, either
	// way.
	ranks atomic.Pointer[ranks]
	built chan struct{}
	// seed hashes lines and pieces for cache and seen.
	seed maphash.Seed

	mu sync.Mutex
	// cache maps the hash of a line or piece to its text and count: an
	// entry counts only for the text it holds (a look-up compares it), and
	// a text whose hash another holds replaces it.
	cache map[uint64]cached
	// cachedBytes is the bytes of cache's texts.
	cachedBytes int
	// seen holds the hashes of recently counted lines, one per slot (a
	// line's hash picks its slot): an ASCII line is cached only when its
	// hash is in seen already, the second time it is counted.
	seen *[seenSlots]uint64
}

// cached is a cache entry: a text and its count.
type cached struct {
	text string
	n    int
}

// seenSlots is the size of a Counter's seen, in line hashes (128 KiB): a
// 16 KB output is some 150 to 300 lines, so the lines of the last few
// dozen outputs are remembered.
const seenSlots = 1 << 14

// New returns the Counter of family ("" for DefaultFamily). It fails for a
// name not in Families, naming the known ones.
func New(family string) (*Counter, error) {
	if family == "" {
		family = DefaultFamily
	}
	enc, ok := Families[family]
	if !ok {
		return nil, fmt.Errorf("unknown tokenizer %q (known: %s, or none)", family, strings.Join(Names(), ", "))
	}
	return &Counter{enc: enc, cl100k: enc == tokenizer.Cl100kBase, seed: maphash.MakeSeed(),
		cache: make(map[uint64]cached, 1024), seen: new([seenSlots]uint64), built: make(chan struct{})}, nil
}

// Names lists the family names, sorted.
func Names() []string {
	out := make([]string, 0, len(Families))
	for k := range Families {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Name is the encoding's name ("o200k_base").
func (c *Counter) Name() string { return string(c.enc) }

// Count returns the tokens of text: the sum of its pieces' counts, each
// piece encoded alone. Invalid UTF-8 is counted as the encoder replaces
// it; an encoder error (or an encoding that failed to load) counts the
// piece as one token per 4 bytes and is never returned (a report figure,
// not a decision).
//
// A line up to maxCachedLine bytes is cached as the sum of its pieces'
// counts, so a repeated line is one look-up. A line with a byte over 0x7f
// is cached the first time, when it has two pieces or more (a line of one
// piece is that piece, which the library counted and which is cached
// already); an ASCII line the second time (its hash in seen): storing a
// new ASCII line costs more than counting it, and most lines of a tool's
// output are new. A line of one piece counts as that piece, so the one
// cache holds lines and pieces.
func (c *Counter) Count(text string) int {
	c.load()
	r := c.ranks.Load()
	n := 0
	// The cache is read under one hold of the lock for every run of
	// cached lines (a 16 KB output is some 150 lines); a line not cached
	// is counted with the lock released.
	c.mu.Lock()
	for len(text) > 0 {
		le := strings.IndexByte(text, '\n') + 1
		if le == 0 {
			le = len(text)
		}
		line := text[:le]
		text = text[le:]
		var h uint64
		again := false
		if len(line) <= maxCachedLine {
			h = maphash.String(c.seed, line)
			if k, ok := c.lookup(h, line); ok {
				n += k
				continue
			}
			s := &c.seen[h%seenSlots]
			again, *s = *s == h, h
		}
		c.mu.Unlock()
		ascii := r != nil && isASCII(line)
		ln, pieces := c.countLine(r, line, ascii)
		c.mu.Lock()
		if len(line) <= maxCachedLine && (ascii && again || !ascii && pieces > 1) {
			c.store(h, line, ln)
		}
		n += ln
	}
	c.mu.Unlock()
	return n
}

// countLine returns the tokens of line (one line, its ending included;
// ascii when every byte is under 0x80 and r, the rank table, is built) and
// how many pieces it has; c.mu is not held. In a line that is not ASCII,
// each ASCII piece is still counted with r.
func (c *Counter) countLine(r *ranks, line string, ascii bool) (n, pieces int) {
	for rest := line; len(rest) > 0; pieces++ {
		end := pieceEnd(rest)
		if p := rest[:end]; ascii || r != nil && isASCII(p) {
			n += asciiCount(r, p, c.cl100k)
		} else {
			n += c.piece(p)
		}
		rest = rest[end:]
	}
	return n, pieces
}

// asciiCount returns the tokens of the piece p (all ASCII bytes) with the
// rank table r and the pre-split of cl100k_base (cl100k) or o200k_base:
// its pre-tokens' byte-pair counts, summed. A byte no pre-token matches
// (DEL) is skipped, as the library's split skips it.
func asciiCount(r *ranks, p string, cl100k bool) int {
	n := 0
	for len(p) > 0 {
		k := asciiPreToken(p, cl100k)
		if k == 0 {
			p = p[1:]
			continue
		}
		n += r.tokens(p[:k])
		p = p[k:]
	}
	return n
}

// maxCachedLine is the longest line Count caches whole, in bytes: the
// cache keeps each entry's bytes, so a long line (a minified bundle's) is
// left to its pieces.
const maxCachedLine = 1 << 10

// pieceEnd returns the length of text's first piece: up to and including
// its first line ending, or up to the space that starts the next word (a
// space after a non-blank byte), whichever comes first. The encoders'
// pre-split never joins a word to the space-led word after it, so the
// pieces' counts add up to the text's (README, "Tokens and recall", gives
// the measured difference), while words repeat far more often than whole
// lines and hit the cache.
func pieceEnd(text string) int {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			return i + 1
		case ' ':
			if i > 0 && text[i-1] != ' ' && text[i-1] != '\t' && text[i-1] != '\n' {
				return i
			}
		}
	}
	return len(text)
}

// load loads the encoding and its ASCII rank table, once.
func (c *Counter) load() {
	c.once.Do(func() {
		codec, err := tokenizer.Get(c.enc)
		if err != nil {
			close(c.built)
			return
		}
		c.codec = codec
		go c.buildRanks()
	})
}

// buildRanks builds the rank table, then closes built. A codec of its own
// decodes the ranks, so the table of every token it builds to decode is
// dropped with it; a panic leaves the table unbuilt (every piece to the
// library's encoder), never the process down.
func (c *Counter) buildRanks() {
	defer close(c.built)
	defer func() { _ = recover() }()
	if dec, err := tokenizer.Get(c.enc); err == nil {
		c.ranks.Store(loadRanks(dec))
	}
}

// line returns the tokens of l counted as one piece, as Count counts a
// piece (tests compare Count with the sum of its pieces).
func (c *Counter) line(l string) int {
	c.load()
	if r := c.ranks.Load(); r != nil && isASCII(l) {
		return asciiCount(r, l, c.cl100k)
	}
	return c.piece(l)
}

// piece returns the tokens of the piece l as the library's encoder counts
// them, from the cache when it holds l; a piece counted is cached. c.mu is
// not held.
func (c *Counter) piece(l string) int {
	h := maphash.String(c.seed, l)
	c.mu.Lock()
	k, ok := c.lookup(h, l)
	c.mu.Unlock()
	if ok {
		return k
	}
	k = c.libraryCount(l)
	c.mu.Lock()
	c.store(h, l, k)
	c.mu.Unlock()
	return k
}

// libraryCount counts l with the library's encoder alone, (len(l)+3)/4
// when it fails or did not load.
func (c *Counter) libraryCount(l string) int {
	c.load()
	if c.codec == nil {
		return (len(l) + 3) / 4
	}
	k, err := c.codec.Count(l)
	if err != nil {
		k = (len(l) + 3) / 4
	}
	return k
}

// lookup returns the cached count of l, whose hash is h; c.mu is held.
func (c *Counter) lookup(h uint64, l string) (int, bool) {
	if e, ok := c.cache[h]; ok && e.text == l {
		return e.n, true
	}
	return 0, false
}

// maxCachedText is the longest text store keeps, in bytes: a longer one
// (a long piece with a byte over 0x7f, a minified bundle's line) would
// alone take a large share of maxCachedBytes, or exceed it, and empty the
// cache for one entry that rarely repeats.
const maxCachedText = maxCachedBytes / 64

// store caches k for the text l, whose hash is h, in place of any text of
// the same hash; a text over maxCachedText bytes is not kept. c.mu is
// held.
func (c *Counter) store(h uint64, l string, k int) {
	if len(l) > maxCachedText {
		return
	}
	if old, ok := c.cache[h]; ok {
		c.cachedBytes -= len(old.text)
	}
	if len(c.cache) >= maxCached || c.cachedBytes+len(l) > maxCachedBytes {
		clear(c.cache)
		c.cachedBytes = 0
	}
	c.cache[h] = cached{strings.Clone(l), k}
	c.cachedBytes += len(l)
}
