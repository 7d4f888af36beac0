package redact

// feat is a set of features of one line, found in one pass (scanLine): the
// rules test it before they look for anything, so a line is scanned once
// for all of their triggers instead of once per trigger.
type feat uint32

const (
	fStem   feat = 1 << iota // a stem of a credential name (hasStem)
	fEq                      // =
	fColon                   // :
	fQuote                   // " or '
	fLt                      // <
	fBrace                   // {
	fQuery                   // ? or &
	fAt                      // @
	fDash                    // -
	fBearer                  // "earer " (any case)
	fAuthz                   // "uthorization" (any case)
	fCookie                  // "ookie" (any case)
	fHook                    // "hook" or "googleapis"
	fAzure                   // "Q~"
	fPEM                     // "-----BEGIN "
	fScheme                  // "://"
	fFlag                    // " -" (a short or long flag)
	fNetrc                   // "machine" or "passw"
	fEyJ                     // "eyJ" (a JWT)
	fCells                   // two blanks, a tab, "|" or a box-drawing byte: a table's cells
	fValue                   // "alue" (any case): a VALUE column
)

// byteFeat maps single bytes to their features.
var byteFeat = [256]feat{
	'=': fEq, ':': fColon, '"': fQuote, '\'': fQuote, '<': fLt, '{': fBrace, '?': fQuery, '&': fQuery,
	'@': fAt, '-': fDash, '\t': fCells, '|': fCells, 0xe2: fCells,
}

// trigger is a multi-byte feature: its lower-cased text, its first two
// bytes in the pair table.
type trigger struct {
	text string
	f    feat
}

var triggers = []trigger{
	{"earer ", fBearer}, {"uthorization", fAuthz}, {"ookie", fCookie}, {"hook", fHook}, {"googleapis", fHook},
	{"q~", fAzure}, {"-----begin ", fPEM}, {"://", fScheme}, {" -", fFlag}, {"\t-", fFlag}, {"machine", fNetrc},
	{"passw", fNetrc}, {"eyj", fEyJ}, {"  ", fCells}, {"alue", fValue},
}

// pairSet is a set of byte pairs (first<<8 | second), one bit each: 8 KB,
// small enough to stay in the nearest cache while a line is scanned.
type pairSet [1 << 16 / 64]uint64

func (s *pairSet) add(a, b byte) {
	k := uint16(a)<<8 | uint16(b)
	s[k>>6] |= 1 << (k & 63)
}

func (s *pairSet) has(k uint16) bool { return s[k>>6]&(1<<(k&63)) != 0 }

// scanLine returns the features of a line, ignoring ASCII case for the
// multi-byte ones. It reads each byte once; only where the two bytes
// starting a stem or trigger meet does it compare the rest.
func scanLine(s string) feat {
	var f feat
	if len(s) == 0 {
		return 0
	}
	p := lowerByte[s[0]]
	f |= byteFeat[s[0]]
	for i := 1; i < len(s); i++ {
		c := lowerByte[s[i]]
		f |= byteFeat[c]
		if k := uint16(p)<<8 | uint16(c); anyPairs.has(k) {
			if f&fStem == 0 && stemPairs.has(k) {
				for _, st := range stemsBy[p] {
					if len(s)-i+1 >= len(st) && foldEq(s[i+1:i-1+len(st)], st[2:]) {
						f |= fStem
						break
					}
				}
			}
			if triggerPairs.has(k) {
				for _, t := range triggersBy[p] {
					if f&t.f == 0 && t.text[1] == c && len(s)-i+1 >= len(t.text) && foldEq(s[i+1:i-1+len(t.text)], t.text[2:]) {
						f |= t.f
					}
				}
			}
		}
		p = c
	}
	return f
}
