package events

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s safe to print on a terminal inside one line: every
// byte or rune a terminal would act on rather than show (C0 and C1
// controls, DEL, escape sequences, a newline that would start a forged
// line, Unicode format characters such as bidirectional overrides) and
// every invalid UTF-8 byte is written as a Go escape (\x1b, \n, \u202e).
// A string with none is returned as is. Session and agent ids, machine
// names and paths come from hook payloads, which anyone who can run a
// tool writes.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || unsafeRune(r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports a rune a terminal acts on or that reorders text.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || unicode.Is(unicode.Cf, r) ||
		r == '\u2028' || r == '\u2029'
}
