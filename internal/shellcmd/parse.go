package shellcmd

import "strings"

// Command is one simple command of a pipeline.
type Command struct {
	// Words are the command's words with quotes and escapes removed;
	// redirections and their targets are not among them. $(…) and
	// backquoted substitutions stay whole, as written.
	Words []string
	// StdoutAway reports that the command's stdout is redirected away from
	// the output (">file", "&>file"); ">&2" is not away, since the host
	// shows stderr too.
	StdoutAway bool
}

// Parse splits a command line into pipelines (separated by ;, &&, ||, &
// and newlines) of simple commands (separated by | and |&). It tokenises
// single and double quotes, backslash escapes and line continuations,
// $(…) and backquotes, comments, redirections (with their descriptor
// digits and targets) and here-documents (whose bodies are skipped); it
// expands nothing. Empty commands are left out. complexCmd is true for
// subshells, groups, compound commands (if, for, while, case, function,
// [[ …) and ";;", whose structure Parse does not follow: a caller should
// not claim to know what such a line prints.
func Parse(s string) (pipes [][]Command, complexCmd bool) {
	var cur []Command
	var words []string
	var word strings.Builder
	inWord := false
	away := false
	redirNext := false // the next word is a redirection target
	var heredocs []string
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if redirNext {
			redirNext = false
			return
		}
		words = append(words, w)
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cur = append(cur, Command{Words: words, StdoutAway: away})
		}
		words, away = nil, false
	}
	endPipe := func() {
		endCmd()
		if len(cur) > 0 {
			pipes = append(pipes, cur)
		}
		cur = nil
	}
	n := len(s)
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < n && s[i+1] == '\n' {
				i++
				continue
			}
			inWord = true
			if i+1 < n {
				word.WriteByte(s[i+1])
				i++
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				word.WriteString(s[i+1:])
				i = n
				continue
			}
			word.WriteString(s[i+1 : i+1+j])
			i += 1 + j
		case c == '"':
			inWord = true
			j := i + 1
			for j < n && s[j] != '"' {
				if s[j] == '\\' && j+1 < n {
					j++
				}
				word.WriteByte(s[j])
				j++
			}
			i = j
		case c == '`':
			inWord = true
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				i = n
				continue
			}
			word.WriteString(s[i : i+2+j])
			i += 1 + j
		case c == '$' && i+1 < n && s[i+1] == '(':
			inWord = true
			depth := 0
			j := i + 1
			for ; j < n; j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= n {
				j = n - 1
			}
			word.WriteString(s[i : j+1])
			i = j
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = n
				continue
			}
			i += j - 1
		case c == '\n':
			endPipe()
			// Here-document bodies follow the line that opened them.
			for _, delim := range heredocs {
				for i+1 < n {
					j := strings.IndexByte(s[i+1:], '\n')
					line := s[i+1:]
					if j >= 0 {
						line = s[i+1 : i+1+j]
					}
					if j < 0 {
						i = n
					} else {
						i += 1 + j
					}
					if strings.TrimSpace(line) == delim {
						break
					}
				}
			}
			heredocs = nil
		case c == ';' || c == '&':
			if c == '&' && i+1 < n && s[i+1] == '>' { // &> redirects stdout and stderr
				endWord()
				away = true
				i++
				if i+1 < n && s[i+1] == '>' {
					i++
				}
				redirNext = true
				continue
			}
			if c == '&' && i+1 < n && s[i+1] == '&' {
				i++
			}
			if c == ';' && i+1 < n && s[i+1] == ';' {
				complexCmd = true
				i++
			}
			endPipe()
		case c == '|':
			if i+1 < n && s[i+1] == '|' {
				i++
				endPipe()
				continue
			}
			if i+1 < n && s[i+1] == '&' {
				i++
			}
			endCmd()
		case c == '(' || c == ')':
			complexCmd = true
			endWord()
		case c == '>' || c == '<':
			// A redirection; digits just before it (2>) name the descriptor.
			fd := ""
			if inWord {
				w := word.String()
				if w != "" && strings.Trim(w, "0123456789") == "" {
					fd = w
					word.Reset()
					inWord = false
				} else {
					endWord()
				}
			}
			j := i
			for j < n && (s[j] == '>' || s[j] == '<' || s[j] == '&' || s[j] == '|' || s[j] == '-') {
				j++
			}
			op := s[i:j]
			i = j - 1
			if strings.HasPrefix(op, "<<") && op != "<<<" {
				// here-document: the delimiter word follows.
				k := i + 1
				for k < n && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				e := k
				for e < n && s[e] != ' ' && s[e] != '\t' && s[e] != '\n' && s[e] != ';' && s[e] != '|' && s[e] != '&' {
					e++
				}
				d := strings.Trim(s[k:e], `'"\`)
				if d != "" {
					heredocs = append(heredocs, d)
				}
				i = e - 1
				continue
			}
			if op[0] == '>' && (fd == "" || fd == "1") {
				// ">&2", "1>&2" send stdout to stderr, which the host shows
				// too; ">file" sends it away.
				if !strings.HasPrefix(op, ">&") {
					away = true
				}
			}
			if strings.HasSuffix(op, "&") {
				// 2>&1, >&2: the target is a descriptor word.
				k := i + 1
				for k < n && (s[k] >= '0' && s[k] <= '9' || s[k] == '-') {
					k++
				}
				i = k - 1
				continue
			}
			redirNext = true
		default:
			inWord = true
			word.WriteByte(c)
		}
	}
	endPipe()
	for _, p := range pipes {
		for _, c := range p {
			switch c.Words[0] {
			case "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
				"function", "{", "}", "select", "[[":
				complexCmd = true
			}
		}
	}
	return pipes, complexCmd
}
