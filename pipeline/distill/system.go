package distill

import (
	"strings"
)

// System-tool distillers: curl -v and wget. du, ps, tar -t,
// ls and friends are enumerations and pass whole (isEnumeration).

// distillCurl: curl, verbose or not. Drops the progress meter, "{ [N bytes
// data]" transfer lines, TLS handshake records and curl's default request
// headers (User-Agent, Accept: */*); keeps the connection line, the
// request line, the status line, every other header, the body and curl's
// errors. Its verdict is an HTTP status line or a "curl: (N)" error.
func distillCurl(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "< HTTP/") || strings.HasPrefix(t, "HTTP/"):
			verdict = true
		case strings.HasPrefix(t, "curl: ("):
			verdict, failing = true, true
		case strings.HasPrefix(t, "* The requested URL returned error"):
			failing = true
		case strings.HasPrefix(t, "% Total") && strings.Contains(t, "% Received"),
			strings.HasPrefix(t, "Dload") && strings.Contains(t, "Upload"):
			d.drop(i)
		case curlProgressRow(t):
			d.drop(i)
		case (strings.HasPrefix(t, "{ [") || strings.HasPrefix(t, "} [")) && strings.HasSuffix(t, " data]"):
			d.drop(i)
		case strings.HasPrefix(t, "* TLSv") && (strings.Contains(t, "(IN)") || strings.Contains(t, "(OUT)")):
			d.drop(i)
		case strings.HasPrefix(t, "> User-Agent: curl/") || t == "> Accept: */*":
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// curlProgressRow reports a progress-meter row: only digits, blanks,
// dots, unit letters, colons and dashes, holding "--:--:--" or a time.
func curlProgressRow(t string) bool {
	if t == "" || t[0] < '0' || t[0] > '9' {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9', c == ' ', c == '.', c == ':', c == '-', c == 'k', c == 'M', c == 'G', c == '\r':
		default:
			return false
		}
	}
	return strings.Contains(t, ":")
}

// distillWget: wget. Drops the dot and bar progress lines and the
// resolving/connecting chatter; keeps the request, the response status,
// the length, where it was saved, and errors.
func distillWget(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.Contains(t, " saved [") || strings.HasPrefix(t, "Downloaded: ") || strings.HasPrefix(t, "FINISHED --"):
			verdict = true
		case strings.HasPrefix(t, "ERROR ") || strings.Contains(t, " failed: ") || strings.Contains(t, "ERROR:"):
			verdict, failing = true, true
		case strings.HasPrefix(t, "HTTP request sent") && containsAny(t, " 4", " 5"):
			failing = true
		case wgetDots(t) || (strings.Contains(t, "%[") && strings.Contains(t, "]")):
			d.drop(i)
		case strings.HasPrefix(t, "Resolving ") || (strings.HasPrefix(t, "Connecting to ") && strings.HasSuffix(t, "connected.")):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// wgetDots reports "    50K .......... .......... 50%  1.2M 0s".
func wgetDots(t string) bool {
	k := strings.IndexByte(t, 'K')
	if k <= 0 || !isDigits(t[:k]) || !strings.Contains(t, "..........") {
		return false
	}
	return true
}
