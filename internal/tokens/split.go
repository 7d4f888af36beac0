package tokens

// The encoders split a text into pre-tokens with a regular expression
// before byte-pair merging (tiktoken-go/tokenizer's codec package, matched
// by github.com/dlclark/regexp2). For a piece whose bytes are all ASCII,
// asciiPreToken reproduces that split without the regular-expression
// engine, alternative by alternative, as the engine matches them (leftmost
// alternative first, greedy loops given back one character at a time).
// On ASCII the patterns' classes reduce to:
//
//	\p{L}  A-Z a-z (\p{Lu} A-Z, \p{Ll} a-z; \p{Lt} \p{Lm} \p{Lo} \p{M} none)
//	\p{N}  0-9
//	\s     \t \n \v \f \r and space (the engine tests unicode.IsSpace)
//
// and DEL (0x7f) is in no class the patterns use: the library's compiled
// matcher leaves it out of its negated classes' ASCII bitmaps, so no
// alternative matches at a DEL and the engine skips it, uncounted. The same
// compiled matcher gives \s*[\r\n]+'s greedy run back to the run's first
// line end, not its last (" \n \n" is two pre-tokens there), and that is
// what is reproduced: the count must be the library's.
// exact_test.go's differential tests and FuzzCountMatchesLibrary hold these
// functions to the library's own split.

// Byte classes of an ASCII byte, as the split patterns see it.
const (
	clLower  = 1 << iota // \p{Ll}: a-z
	clUpper              // \p{Lu}: A-Z
	clDigit              // \p{N}: 0-9
	clSpace              // \s: \t \n \v \f \r space
	clNL                 // [\r\n]
	clPunct              // [^\s\p{L}\p{N}] (DEL excluded, as the library's matcher does)
	clPrefix             // [^\r\n\p{L}\p{N}] (DEL excluded, likewise)
)

// asciiClass maps an ASCII byte to its classes (bit set of cl*).
var asciiClass = func() (t [128]uint8) {
	for b := 0; b < 128; b++ {
		var c uint8
		switch {
		case b >= 'a' && b <= 'z':
			c = clLower
		case b >= 'A' && b <= 'Z':
			c = clUpper
		case b >= '0' && b <= '9':
			c = clDigit
		case b == '\r' || b == '\n':
			c = clSpace | clNL
		case b == '\t' || b == '\v' || b == '\f' || b == ' ':
			c = clSpace | clPrefix
		case b == 0x7f:
			c = 0
		default:
			c = clPunct | clPrefix
		}
		t[b] = c
	}
	return t
}()

const clLetter = clLower | clUpper

// isASCII reports whether every byte of s is below 0x80 (eight bytes at a
// time: the hot path checks every line).
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// class returns the classes of s[i], 0 past the end; s is ASCII.
func class(s string, i int) uint8 {
	if i >= len(s) {
		return 0
	}
	return asciiClass[s[i]]
}

// contraction returns the length of the contraction at the start of s
// ((?i:'s|'t|'re|'ve|'m|'ll|'d), case-insensitive), 0 when none; s is
// ASCII.
func contraction(s string) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	switch s[1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(s) >= 3 && s[2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if len(s) >= 3 && s[2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// asciiPreToken returns the length in bytes of the pre-token that the
// family's split pattern matches at the start of s (s non-empty and all
// ASCII), or 0 when no alternative matches there (a DEL byte, which the
// engine skips). cl100k selects cl100k_base's pattern, else o200k_base's.
func asciiPreToken(s string, cl100k bool) int {
	c := asciiClass[s[0]]
	if cl100k {
		// (?i:'s|'t|'re|'ve|'m|'ll|'d)
		if n := contraction(s); n > 0 {
			return n
		}
	}
	// o200k: [^\r\n\p{L}\p{N}]?[Lu]*[Ll]+('s..)? | [^\r\n\p{L}\p{N}]?[Lu]+[Ll]*('s..)?
	// cl100k: [^\r\n\p{L}\p{N}]?\p{L}+
	// The optional prefix is taken when a letter follows it; without it
	// the alternatives need a letter at s[0]. Either way a letter at the
	// start (after the prefix) makes one of the two o200k alternatives
	// match: the upper-case run, then the lower-case run.
	i := 0
	if c&clPrefix != 0 && class(s, 1)&clLetter != 0 {
		i = 1
	}
	if class(s, i)&clLetter != 0 {
		if cl100k {
			for i < len(s) && asciiClass[s[i]]&clLetter != 0 {
				i++
			}
			return i
		}
		for i < len(s) && asciiClass[s[i]]&clUpper != 0 {
			i++
		}
		for i < len(s) && asciiClass[s[i]]&clLower != 0 {
			i++
		}
		return i + contraction(s[i:])
	}
	// \p{N}{1,3}
	if c&clDigit != 0 {
		n := 1
		for n < 3 && class(s, n)&clDigit != 0 {
			n++
		}
		return n
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*' (o200k), ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	// (cl100k): a '/' right after the punctuation run is in the run
	// already, but o200k's tail takes the ones after its line ends too.
	i = 0
	if s[0] == ' ' && class(s, 1)&clPunct != 0 {
		i = 1
	}
	if class(s, i)&clPunct != 0 {
		for i < len(s) && asciiClass[s[i]]&clPunct != 0 {
			i++
		}
		for i < len(s) && (asciiClass[s[i]]&clNL != 0 || !cl100k && s[i] == '/') {
			i++
		}
		return i
	}
	if c&clSpace == 0 {
		return 0 // DEL: no alternative matches here
	}
	// \s*[\r\n]+ : the library's compiled matcher gives the greedy
	// whitespace run back to its FIRST line end (where a backtracking
	// engine would stop at the last), then takes the run of line ends
	// from there.
	q, first := 0, -1
	for q < len(s) && asciiClass[s[q]]&clSpace != 0 {
		if first < 0 && asciiClass[s[q]]&clNL != 0 {
			first = q
		}
		q++
	}
	if first >= 0 {
		for first < len(s) && asciiClass[s[first]]&clNL != 0 {
			first++
		}
		return first
	}
	// \s+(?!\S) : the whole run at the end of s, else the run but its last
	// character (which stays to lead the next pre-token); \s+ : a run of
	// one before a non-space.
	if q == len(s) || q == 1 {
		return q
	}
	return q - 1
}
