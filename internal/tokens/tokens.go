// Package tokens counts text in tokens, as a model's bill counts it, with
// a maintained BPE tokenizer library (github.com/tiktoken-go/tokenizer,
// whose encodings are embedded in the binary: no network at run time).
//
// A text is counted piece by piece: split at line ends and before each
// space-led word (pieceEnd), each piece encoded alone, the counts summed,
// and each distinct piece's count kept in a bounded cache, so a repeated
// word or line costs a map lookup instead of an encoding. Encoding pieces
// alone can differ from encoding the whole text where the encoders'
// pre-split joins across a cut (a run of whitespace spanning a line end);
// README, "Tokens and recall", gives the difference measured on the shared
// corpus.
package tokens

import (
	"fmt"
	"sort"
	"strings"
	"sync"

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

// maxCachedBytes bounds the bytes of the line cache's keys: whole lines
// (up to maxCachedLine) and long pieces make entries far larger than a
// word, so the entry bound alone would let a long-running daemon hold
// hundreds of megabytes. Past it the cache is emptied and refilled.
const maxCachedBytes = 32 << 20

// Counter counts tokens with one encoding. It is safe for concurrent use.
// The encoding is loaded on the first Count (about 0.1 s), not by New.
type Counter struct {
	enc   tokenizer.Encoding
	once  sync.Once
	codec tokenizer.Codec
	mu    sync.Mutex
	cache map[string]int
	// cached is the bytes of cache's keys.
	cached int
}

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
	return &Counter{enc: enc, cache: make(map[string]int, 1024)}, nil
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

// Count returns the tokens of text: the sum of its pieces' counts. Invalid
// UTF-8 is counted as the encoder replaces it; an encoder error (or an
// encoding that failed to load) counts the piece as one token per 4 bytes
// and is never returned (a report figure, not a decision).
func (c *Counter) Count(text string) int {
	n := 0
	// The cache is read under one hold of the lock for every run of
	// cached lines and pieces, not once per piece (a 16 KB output is some
	// 3,000 pieces); a piece not cached is counted with the lock released.
	// A line (up to maxCachedLine bytes) of two pieces or more is cached
	// too, as the sum of its pieces' counts: a repeated line is one look-up
	// instead of one per word. No piece equals such a line (a piece ends
	// where the line's first piece does), so the one cache holds both.
	c.mu.Lock()
	for len(text) > 0 {
		le := strings.IndexByte(text, '\n') + 1
		if le == 0 {
			le = len(text)
		}
		line := text[:le]
		text = text[le:]
		if k, ok := c.cache[line]; ok {
			n += k
			continue
		}
		ln, pieces := 0, 0
		for rest := line; len(rest) > 0; pieces++ {
			end := pieceEnd(rest)
			piece := rest[:end]
			rest = rest[end:]
			k, ok := c.cache[piece]
			if !ok {
				c.mu.Unlock()
				k = c.count(piece)
				c.mu.Lock()
			}
			ln += k
		}
		if pieces > 1 && len(line) <= maxCachedLine {
			c.store(line, ln)
		}
		n += ln
	}
	c.mu.Unlock()
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

func (c *Counter) line(l string) int {
	c.mu.Lock()
	k, ok := c.cache[l]
	c.mu.Unlock()
	if ok {
		return k
	}
	return c.count(l)
}

// count counts a piece the cache does not hold and caches it.
func (c *Counter) count(l string) int {
	c.once.Do(func() {
		codec, err := tokenizer.Get(c.enc)
		if err == nil {
			c.codec = codec
		}
	})
	if c.codec == nil {
		return (len(l) + 3) / 4
	}
	k, err := c.codec.Count(l)
	if err != nil {
		k = (len(l) + 3) / 4
	}
	c.mu.Lock()
	c.store(l, k)
	c.mu.Unlock()
	return k
}

// store caches k for the text l; c.mu is held.
func (c *Counter) store(l string, k int) {
	if len(c.cache) >= maxCached || c.cached+len(l) > maxCachedBytes {
		clear(c.cache)
		c.cached = 0
	}
	c.cache[strings.Clone(l)] = k
	c.cached += len(l)
}
