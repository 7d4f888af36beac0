package thin

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeAddr decodes an address file into ad as json.Unmarshal does. The
// file is what the daemon wrote with encoding/json: a flat object of
// exact lowercase keys, strings and integers. That shape, without escapes
// in its strings, is read here directly (a hook process pays encoding/
// json's first use, about 0.1 ms, on every call otherwise); anything else
// (an escape, another key, another kind of value) goes to json.Unmarshal.
func decodeAddr(b []byte, ad *Addr) error {
	var fast Addr
	if decodeFlat(b, &fast) {
		*ad = fast
		return nil
	}
	return json.Unmarshal(b, ad)
}

// decodeFlat reads b as a flat JSON object of Addr's keys, reporting
// false for any input outside the shape decodeAddr reads directly.
func decodeFlat(b []byte, ad *Addr) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return false
		}
		var str string
		var num int
		isNum := false
		if b[i] == '"' {
			if str, i, ok = plainString(b, i); !ok {
				return false
			}
		} else {
			j := i
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			// Plain non-negative integers only, without a leading zero
			// unless zero itself, as encoding/json writes them.
			if j == i || (b[i] == '0' && j-i > 1) || j-i > 18 {
				return false
			}
			n, err := strconv.Atoi(string(b[i:j]))
			if err != nil {
				return false
			}
			num, isNum, i = n, true, j
		}
		if !setAddrField(ad, key, str, num, isNum) {
			return false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// setAddrField sets the field of ad whose JSON key is exactly key, if
// the value is of the field's kind.
func setAddrField(ad *Addr, key, str string, num int, isNum bool) bool {
	if isNum {
		switch key {
		case "pid":
			ad.PID = num
		case "protocol":
			ad.Protocol = num
		default:
			return false
		}
		return true
	}
	switch key {
	case "addr":
		ad.Addr = str
	case "token":
		ad.Token = str
	case "version":
		ad.Version = str
	case "cert":
		ad.Cert = str
	case "sock":
		ad.Sock = str
	case "build":
		ad.Build = str
	case "exe":
		ad.Exe = str
	case "exe_stamp":
		ad.ExeStamp = str
	case "backend":
		ad.Backend = str
	default:
		return false
	}
	return true
}

// plainString reads the JSON string at b[i] when it has no escape, no
// control byte and no invalid UTF-8, and returns it and the index after its closing quote.
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	end := bytes.IndexByte(b[i+1:], '"')
	if end < 0 {
		return "", i, false
	}
	s := b[i+1 : i+1+end]
	for _, c := range s {
		if c == '\\' || c < 0x20 {
			return "", i, false
		}
	}
	if !utf8.Valid(s) {
		return "", i, false // encoding/json would replace the bad bytes
	}
	return string(s), i + 2 + end, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
