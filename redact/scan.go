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
var byteFeat = func() (t [256]feat) {
	t['='] = fEq
	t[':'] = fColon
	t['"'], t['\''] = fQuote, fQuote
	t['<'] = fLt
	t['{'] = fBrace
	t['?'], t['&'] = fQuery, fQuery
	t['@'] = fAt
	t['-'] = fDash
	t['\t'], t['|'], t[0xe2] = fCells, fCells, fCells
	return t
}()

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

// pairFeat marks the lower-cased first two bytes of every trigger (fStem
// for the stems); triggersBy lists the triggers by their first byte.
var (
	pairFeat   [1 << 16]feat
	triggersBy [256][]trigger
)

func init() {
	for _, s := range stems {
		pairFeat[uint16(s[0])<<8|uint16(s[1])] |= fStem
	}
	for _, t := range triggers {
		pairFeat[uint16(t.text[0])<<8|uint16(t.text[1])] |= 1 << 31
		triggersBy[t.text[0]] = append(triggersBy[t.text[0]], t)
	}
}

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
		if pf := pairFeat[uint16(p)<<8|uint16(c)]; pf != 0 {
			if pf&fStem != 0 && f&fStem == 0 {
				for _, st := range stemsBy[p] {
					if len(s)-i+1 >= len(st) && foldEq(s[i+1:i-1+len(st)], st[2:]) {
						f |= fStem
						break
					}
				}
			}
			if pf&(1<<31) != 0 {
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
