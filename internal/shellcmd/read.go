package shellcmd

import (
	"path"
	"strings"
)

// readPrograms are commands whose output is (a window of) one file's lines.
func readPrograms(s string) bool {
	switch s {
	case "cat", "head", "tail", "nl", "sed", "less", "more", "bat", "batcat":
		return true
	}
	return false
}

// readFilters may follow a file read without changing which file the lines
// come from (they only pick or number lines).
func readFilters(s string) bool {
	switch s {
	case "head", "tail", "sed", "nl", "cat":
		return true
	}
	return false
}

// FileRead returns the file a shell command reads, when the command is a
// plain read of one file (`cat -n F`, `head -50 F`, `sed -n '10,20p' F`,
// `nl -ba F | sed -n '1,40p'`, optionally after `cd DIR &&`), else "". The
// path is cleaned, and joined to DIR when it is relative. Anything the
// reader would have to expand or follow (a variable, a glob, a
// substitution, a redirection, a list, a newline, `||`) gives "".
//
// The ledger uses it as the source of the delivered lines, so reading the
// same file through different commands is one source, as a Read of one
// path is: the same line through `sed -n` and `cat` is one line, and a
// re-read of an unchanged file is answered as one.
func FileRead(cmd string) string {
	if strings.ContainsAny(cmd, "\n;`$<>(){}*?") || strings.Contains(cmd, "||") {
		return ""
	}
	dir := ""
	segs := strings.Split(cmd, "&&")
	if len(segs) == 2 {
		w := LeadingWords(segs[0], 64)
		if len(w) != 2 || w[0] != "cd" {
			return ""
		}
		dir = w[1]
		cmd = segs[1]
	} else if len(segs) > 2 {
		return ""
	}
	stages := strings.Split(cmd, "|")
	file := ""
	for i, st := range stages {
		w := LeadingWords(st, 64)
		if len(w) == 0 {
			return ""
		}
		prog := Base(w[0])
		if i == 0 {
			if !readPrograms(prog) {
				return ""
			}
			var operands []string
			for k := 1; k < len(w); k++ {
				a := w[k]
				switch {
				case strings.HasPrefix(a, "-"):
					// head/tail -n N and -c N take a value.
					if (prog == "head" || prog == "tail") && (a == "-n" || a == "-c") && k+1 < len(w) {
						k++
					}
				case prog == "sed" && isSedScript(a):
				default:
					operands = append(operands, a)
				}
			}
			if len(operands) != 1 {
				return ""
			}
			file = operands[0]
			continue
		}
		if !readFilters(prog) {
			return ""
		}
		for _, a := range w[1:] {
			if !strings.HasPrefix(a, "-") && !(prog == "sed" && isSedScript(a)) && !isNumber(a) {
				return ""
			}
		}
	}
	if file == "" {
		return ""
	}
	if dir != "" && !path.IsAbs(file) {
		file = path.Join(dir, file)
	}
	return path.Clean(file)
}

// isSedScript reports a sed -n line-range script such as 10,20p or 5p.
func isSedScript(a string) bool {
	if !strings.HasSuffix(a, "p") || len(a) < 2 {
		return false
	}
	for _, c := range a[:len(a)-1] {
		if !(c >= '0' && c <= '9' || c == ',' || c == '$') {
			return false
		}
	}
	return true
}

func isNumber(a string) bool {
	if a == "" {
		return false
	}
	for _, c := range strings.TrimPrefix(a, "+") {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
