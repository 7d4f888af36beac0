package redact

import (
	"slices"
	"strings"
)

// This file holds the rules for credentials that stand in a shape rather
// than after an assignment sign: a key/value table a CLI prints, a
// language's struct dump, a value given to a CLI's `config set`, and (with
// the command that printed it, Output) a bare token from a command whose
// name says it prints one.

// isBoxSep reports a table's column separator at s[i:]: "|" or one of the
// box-drawing verticals "│", "┃", "║". n is its length in bytes.
func isBoxSep(s string, i int) (n int) {
	switch s[i] {
	case '|':
		return 1
	case 0xe2: // the first byte of every box-drawing vertical
	default:
		return 0
	}
	for _, b := range []string{"│", "┃", "║"} {
		if strings.HasPrefix(s[i:], b) {
			return len(b)
		}
	}
	return 0
}

// tableCells splits a table row into its cells: on column separators
// ("|", "│") when the row has one, else on runs of two or more blanks or a
// tab (a CLI's aligned key/value listing). Each cell is trimmed of
// blanks; at most len(buf) cells are returned.
func tableCells(line string, buf []seg) []seg {
	cells := buf[:0]
	boxed := false
	for i := 0; i < len(line); i++ {
		if isBoxSep(line, i) > 0 {
			boxed = true
			break
		}
	}
	add := func(s, e int) {
		for s < e && (line[s] == ' ' || line[s] == '\t') {
			s++
		}
		for e > s && (line[e-1] == ' ' || line[e-1] == '\t') {
			e--
		}
		if s < e && len(cells) < cap(cells) {
			cells = append(cells, seg{s, e})
		}
	}
	start := 0
	for i := 0; i < len(line); {
		if boxed {
			if n := isBoxSep(line, i); n > 0 {
				add(start, i)
				i += n
				start = i
				continue
			}
			i++
			continue
		}
		if line[i] == '\t' || line[i] == ' ' && i+1 < len(line) && line[i+1] == ' ' {
			add(start, i)
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			start = i
			continue
		}
		i++
	}
	add(start, len(line))
	return cells
}

// tableSpans finds a credential in a key/value table row a CLI prints
// (`vault kv get`, `doppler secrets`, `heroku config`, `op item get`, an
// aligned `KEY   VALUE` listing or a "│ NAME │ VALUE │" box): the first
// cell is a credential name and the second one word that looks like a
// value, not a word (a digit or a symbol beside letters, or 16 bytes and
// more).
func tableSpans(line string, f feat, out []span) []span {
	p := skipLinePrefix(line)
	if f&fCells != 0 && !hasCells(line[p:]) {
		f &^= fCells // only the indentation had two blanks
	}
	if f&fCells == 0 {
		// One cell: only "Title Name: V" (API Key: V) remains.
		k := strings.Index(line[p:], ": ")
		if k <= 0 || !titleName(strings.TrimLeft(line[p:p+k], " ")) {
			return out
		}
	}
	var buf [8]seg
	cells := tableCells(line[p:], buf[:])
	if len(cells) == 1 {
		// "API Key: V": a name of two or three words, a colon, one blank.
		c := line[p+cells[0].s : p+cells[0].e]
		if k := strings.Index(c, ": "); k > 0 && titleName(c[:k]) {
			cells = append(cells[:1], seg{cells[0].s + k + 2, cells[0].e})
			cells[0].e = cells[0].s + k
		}
	}
	// A key/value listing has two columns (a boxed one may add a note or
	// two); a wider table is a listing of things whose first column names
	// them ("auth   svc-01   ClusterIP ..."), handled by its header
	// (columnSpans).
	if len(cells) < 2 || len(cells) > 2 && !(len(cells) <= 4 && boxedRow(line[p:])) {
		return out
	}
	name := strings.TrimSpace(strings.TrimSuffix(line[p+cells[0].s:p+cells[0].e], ":"))
	if !(fieldName(name) || titleName(name)) || strings.ContainsAny(name, "=`'\"()") {
		return out
	}
	matched, weak := matchName(name)
	if !matched {
		return out
	}
	v := line[p+cells[1].s : p+cells[1].e]
	if strings.ContainsAny(v, " \t") || !tableValue(v) || !credentialValue(v, weak, ctxColon, false) {
		return out
	}
	return append(out, span{p + cells[1].s, p + cells[1].e, "table"})
}

// titleName reports a name of two or three Title Case words whose last
// names a credential (a CLI's "API Key", "Client Secret", "Secret Access
// Key").
func titleName(s string) bool {
	words, n := 0, 0 // words seen, letters in the current one
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if n == 0 || n > 16 {
				return false
			}
			words, n = words+1, 0
			continue
		}
		if !isUpper(s[i]) && !isLower(s[i]) || n == 0 && !isUpper(s[i]) {
			return false // Title Case words only: "API Key", not "POST key"
		}
		n++
	}
	if words < 2 || words > 3 {
		return false
	}
	// The last word names the credential ("Client Secret", not "Token
	// generated").
	m, _ := matchName(s[strings.LastIndexByte(s, ' ')+1:])
	return m
}

// hasCells reports two cells in s after its indentation: a run of two
// blanks, a tab, "|" or a box-drawing byte.
func hasCells(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return strings.Contains(s, "  ") || strings.IndexByte(s, '\t') >= 0 || strings.IndexByte(s, '|') >= 0 || strings.IndexByte(s, 0xe2) >= 0
}

// boxedRow reports a row with column separators ("|", "│").
func boxedRow(s string) bool {
	for i := 0; i < len(s); i++ {
		if isBoxSep(s, i) > 0 {
			return true
		}
	}
	return false
}

// tableValue reports a table cell that reads as a value rather than a word
// or a setting: letters with a digit or a symbol, or 16 bytes and more
// that are not an identifier, and never a path, a reference or a masked
// rendering ("****", "<not set>").
func tableValue(v string) bool {
	if len(v) < 6 || placeholder(v) || filePath(v) || isShellExpansion(v) || strings.HasPrefix(v, "<") ||
		strings.ContainsAny(v[:1]+v[len(v)-1:], "`'\"([{") ||
		strings.HasPrefix(v, "*") || strings.Contains(v, "://") && !strings.Contains(v, "@") {
		return false
	}
	letter, other := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isUpper(c) || isLower(c):
			letter = true
		case c >= 0x80:
			return false
		default:
			other = true
		}
	}
	return letter && (other || len(v) >= 16 && !isIdentifier(v))
}

// structSpans finds credential fields of a language's struct dump: Go's
// %+v (`&{Host:db Password:v User:app}`, `map[password:v]`) and %#v
// (`Config{Password:"v"}`): a field `Name:value` with no blank after the
// colon, inside braces or map[...], whose name is a credential name. The
// value runs to the next blank or closing bracket (a quoted value to its
// closing quote).
func structSpans(line string, out []span) []span {
	depth := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '{':
			if i > 0 && line[i-1] == '$' {
				return out // a shell expansion, ${NAME:-default}
			}
			depth++
			continue
		case c == '[' && i >= 3 && line[i-3:i] == "map":
			depth++
			continue
		case c == '}' || c == ']':
			if depth > 0 {
				depth--
			}
			continue
		}
		if depth == 0 || !isNameByte(c) || i > 0 && isNameByte(line[i-1]) {
			continue
		}
		prev := byte(' ')
		if i > 0 {
			prev = line[i-1]
		}
		if prev != '{' && prev != '[' && prev != ' ' && prev != ',' {
			continue
		}
		e := i
		for e < len(line) && isNameByte(line[e]) {
			e++
		}
		if e+1 >= len(line) || line[e] != ':' || line[e+1] == ' ' || line[e+1] == ':' {
			i = e - 1
			continue
		}
		name := line[i:e]
		vs := e + 1
		ve := vs
		quoted := false
		if line[vs] == '"' {
			if q := quotedEnd(line, vs); q > vs {
				vs, ve, quoted = vs+1, q, true
			}
		}
		if !quoted {
			for ve < len(line) && line[ve] != ' ' && line[ve] != '}' && line[ve] != ']' {
				ve++
			}
		}
		i = ve - 1
		matched, weak := matchName(name)
		if !matched || ve <= vs {
			continue
		}
		v := line[vs:ve]
		if v == "<nil>" || credentialValue(unescape(v), weak, ctxColon, quoted) && (quoted || !plainWord(v)) {
			if v != "<nil>" {
				out = append(out, span{vs, ve, "struct"})
			}
		}
	}
	return out
}

// configVerbs are the words after which a CLI takes a setting's name and
// then its value (`aws configure set NAME V`, `npm config set NAME V`,
// `git config --global NAME V`, `gh secret set NAME V`).
func configVerbs(s string) bool {
	switch s {
	case "set", "add", "put", "config":
		return true
	}
	return false
}

// configNouns mark a command as one that stores settings: a configVerb
// only counts after one of them (so `kubectl set image` is not one).
func configNouns(s string) bool {
	switch s {
	case "config", "configure", "configuration", "settings",
		"secret", "secrets", "credential", "credentials", "env", "vars",
		"variable", "variables", "kv", "auth", "token", "property", "git":
		return true
	}
	return false
}

// secretVerb reports a subcommand that stores a named secret:
// add-authtoken, set-token, put-password (a verb, "-", then a word that
// names a credential).
func secretVerb(t string) bool {
	k := strings.IndexByte(t, '-')
	if k < 0 {
		return false
	}
	switch t[:k] {
	case "add", "set", "put", "save", "store", "update":
		return segmentsName(t[k+1:])
	}
	return false
}

// valueFlags give the value to a configuration command's verb.
func valueFlags(s string) bool {
	switch s {
	case "--value", "--secret-value", "--body", "-b", "--data":
		return true
	}
	return false
}

// configSetSpans finds a secret given to a CLI's configuration command:
// after a configuration noun and a verb (set, add, put; git's own config),
// a setting whose name is a credential name (its last dotted, slashed or
// colon segment: aws_secret_access_key, github.token,
// //registry.npmjs.org/:_authToken) and then its value, as a separate word.
func configSetSpans(line string, out []span) []span {
	if !strings.Contains(line, "config") && !strings.Contains(line, "set") && !strings.Contains(line, "put") && !strings.Contains(line, "add") {
		return out // no configuration verb
	}
	var buf [32]word
	ws := splitWords(line, buf[:])
	noun, gitNoun := false, false
	pos := 0 // the word's place in its simple command (0: the program)
	for i := 0; i < len(ws); i, pos = i+1, pos+1 {
		w := ws[i]
		// Subcommands are lower case: a word as written (lower-casing
		// every word of every named line would allocate).
		t := line[w.s:w.e]
		if k := strings.LastIndexByte(t, '/'); k >= 0 && !w.quoted {
			t = t[k+1:]
		}
		if noun && !w.quoted && (t == "--set" || t == "--add") {
			t = strings.TrimLeft(t, "-") // conda config --set NAME V
		}
		if w.quoted || strings.HasPrefix(t, "-") {
			continue
		}
		if t == "&&" || t == "||" || t == ";" || t == "|" {
			noun, pos = false, -1
			continue
		}
		if noun && !configVerbs(t) && !configNouns(t) && secretVerb(t) {
			// A verb that names the secret (ngrok config add-authtoken V).
			if i+1 < len(ws) {
				n := ws[i+1]
				if v := line[n.s:n.e]; (n.quoted || !strings.HasPrefix(v, "-")) && credentialValue(v, false, ctxQuery, n.quoted) &&
					!filePath(v) && (n.quoted || !plainWord(v)) {
					out = append(out, span{n.s, n.e, "config-set"})
				}
			}
			continue
		}
		verb := noun && configVerbs(t) && !(gitNoun && t != "config")
		if !verb {
			// A noun names the command's subject: the program or one of
			// the two words after it (aws configure, az keyvault secret).
			if configNouns(t) && pos <= 2 {
				noun, gitNoun = true, t == "git"
				// config and configure may take the setting at once
				// (poetry config NAME V).
				verb = t == "config" || t == "configure"
			}
			if !verb {
				continue
			}
		}
		// A value given by flag (az keyvault secret set --value V, gh
		// secret set NAME --body V).
		for j := i + 1; j+1 < len(ws); j++ {
			f := line[ws[j].s:ws[j].e]
			if ws[j].quoted || !valueFlags(f) {
				continue
			}
			n := ws[j+1]
			if v := line[n.s:n.e]; credentialValue(v, false, ctxQuery, n.quoted) && !filePath(v) {
				out = append(out, span{n.s, n.e, "config-set"})
			}
		}
		// The setting's name: the next word that is not a flag.
		j := i + 1
		for j < len(ws) && !ws[j].quoted && strings.HasPrefix(line[ws[j].s:ws[j].e], "-") {
			j++
		}
		if j+1 >= len(ws) {
			return out
		}
		name := line[ws[j].s:ws[j].e]
		if strings.IndexByte(name, '/') >= 0 && !strings.Contains(name, "/:") {
			continue // a path, not a setting (npm's //host/:_authToken is one)
		}
		if k := strings.LastIndexAny(name, ".:/"); k >= 0 {
			name = name[k+1:]
		}
		name = strings.TrimLeft(name, "_")
		matched, weak := matchName(name)
		if !matched {
			// pypi-token.pypi: the credential word is not the last part.
			full := strings.Map(func(r rune) rune {
				if r == '.' || r == ':' || r == '/' {
					return '_'
				}
				return r
			}, strings.Trim(line[ws[j].s:ws[j].e], "/:_."))
			if matched, weak = matchName(full); !matched {
				continue
			}
		}
		if j+2 < len(ws) && line[ws[j+1].s:ws[j+1].e] == "<<<" {
			j++ // wrangler secret put NAME <<< V
		}
		n := ws[j+1]
		v := line[n.s:n.e]
		if !n.quoted && strings.HasPrefix(v, "-") {
			continue
		}
		if credentialValue(v, weak, ctxQuery, n.quoted) && (!filePath(v) || randomSegment(v)) && (n.quoted || !plainWord(v)) {
			out = append(out, span{n.s, n.e, "config-set"})
		}
		i = j + 1
	}
	return out
}

// secretWordList are the name segments that say a command prints a
// credential: print-access-token, get-session-token, auth:token,
// get-login-password, get-secret-value.
var secretWordList = []string{"token", "tokens", "password", "passwd", "secret", "secrets",
	"credential", "credentials", "creds", "apikey", "passphrase"}

// secretWords reports whether s is one of secretWordList.
func secretWords(s string) bool { return slices.Contains(secretWordList, s) }

// secretStores are password managers whose every read prints a secret
// (pass show NAME, gopass, keyring get).
func secretStores(s string) bool {
	switch s {
	case "pass", "gopass", "keyring":
		return true
	}
	return false
}

// valueSelectors are the flags that pick which field of a record a
// command prints.
func valueSelectors(s string) bool {
	switch s {
	case "field", "f", "query", "jsonpath", "o", "output",
		"template", "go-template", "format":
		return true
	}
	return false
}

// readerCommands print a file; a file whose name is a credential name
// (`cat ~/.config/gh/token`, `cat /run/secrets/db_password`) prints one.
func readerCommands(s string) bool {
	switch s {
	case "cat", "head", "tail", "more", "bat", "type":
		return true
	}
	return false
}

// searchCommands take a pattern, not a subcommand: a credential word in
// their arguments says nothing of what they print.
func searchCommands(s string) bool {
	switch s {
	case "grep", "rg", "ag", "ack", "find", "fd",
		"sed", "awk", "git", "ls", "echo", "printf", "man", "which",
		"go", "python", "python3", "node", "npm", "pytest", "make", "cargo",
		"tree", "wc", "diff", "sort", "uniq", "jq", "yq", "cd":
		return true
	}
	return false
}

// PrintsSecret reports whether command, a shell command line, runs a
// command whose name says it prints a credential: one of its first three
// words after the program (a subcommand, not a flag) has a segment that
// names one (`gcloud auth print-access-token`, `heroku auth:token`,
// `aws sts get-session-token`, `aws ecr get-login-password`, `gh auth
// token`), or a file reader's file is named as one (`cat
// /run/secrets/db_password`). Search and build tools never count: their
// words are patterns and targets.
func PrintsSecret(command string) bool {
	// The first line only: what follows is a heredoc's body or a
	// script's, whose words are code, not commands.
	if k := strings.IndexByte(command, '\n'); k >= 0 {
		command = command[:k]
	}
	if k := strings.Index(command, "<<"); k >= 0 {
		command = command[:k]
	}
	if command == "" || len(command) > 4096 || !hasStem(command) && !strings.Contains(strings.ToLower(command), "cred") {
		return false
	}
	for _, part := range splitCommands(command) {
		var buf [32]word
		ws := splitWords(part, buf[:])
		k := 0
		for k < len(ws) && strings.IndexByte(part[ws[k].s:ws[k].e], '=') > 0 {
			k++ // an environment prefix
		}
		if k >= len(ws) {
			continue
		}
		prog := part[ws[k].s:ws[k].e]
		if i := strings.LastIndexByte(prog, '/'); i >= 0 {
			prog = prog[i+1:]
		}
		if prog == "sudo" || prog == "env" || prog == "command" || prog == "exec" {
			k++
			if k >= len(ws) {
				continue
			}
			prog = part[ws[k].s:ws[k].e]
		}
		if searchCommands(prog) || !programName(prog) {
			continue
		}
		if secretStores(prog) {
			return true
		}
		reader := readerCommands(prog)
		seen := 0
		for _, w := range ws[k+1:] {
			t := part[w.s:w.e]
			if i := strings.IndexByte(t, '='); i >= 0 {
				// A field or query named by a flag (vault kv get
				// -field=password, kubectl -o jsonpath={.data.token}).
				name := strings.ToLower(strings.TrimLeft(t[:i], "-"))
				if valueSelectors(name) && segmentsName(t[i+1:]) {
					return true
				}
				continue
			}
			if strings.HasPrefix(t, "-") {
				// A flag that asks for the secret itself (lpass show
				// --password); not one that feeds one in.
				l := strings.ToLower(t)
				if !reader && !strings.Contains(l, "stdin") && !strings.Contains(l, "file") && segmentsName(strings.TrimLeft(t, "-")) {
					return true
				}
				continue
			}
			if seen++; seen > 3 {
				break
			}
			if reader {
				if i := strings.LastIndexByte(t, '/'); i >= 0 {
					t = t[i+1:]
				}
				if m, weak := matchName(t); m && !weak && !strings.Contains(t, ".") {
					return true
				}
				continue
			}
			if !strings.ContainsAny(t, "`'\"") && segmentsName(t) {
				return true
			}
		}
	}
	return false
}

// segmentsName reports a word one of whose segments (split on - : _ .) is
// a secretWord, or whose words run together as one (accesstoken).
func segmentsName(t string) bool {
	t = strings.ToLower(t)
	if len(t) > 64 {
		return false
	}
	for _, s := range strings.FieldsFunc(t, func(r rune) bool {
		return r == '-' || r == ':' || r == '_' || r == '.' || r == '/' || r == '{' || r == '}' || r == '[' || r == ']' || r == '\'' || r == '"'
	}) {
		if secretWords(s) {
			return true
		}
		for _, w := range secretWordList {
			if len(s) > len(w) && strings.HasSuffix(s, w) && (strings.HasPrefix(s, "access") || strings.HasPrefix(s, "session") ||
				strings.HasPrefix(s, "auth") || strings.HasPrefix(s, "id") || strings.HasPrefix(s, "api")) {
				return true
			}
		}
	}
	return false
}

// splitCommands splits a command line on the shell's separators
// (|, ||, &&, ;) outside quotes.
func splitCommands(s string) []string {
	var out []string
	start := 0
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '|' || c == ';' || c == '&' || c == '\n':
			out = append(out, s[start:i])
			for i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
				i++
			}
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// bareTokenSpans masks, in the output of a command that prints a
// credential, each word that looks generated: 16 bytes or more of letters,
// digits and token punctuation with at least three letters and a digit,
// never a URL, a path or a timestamp; and a line that is one word of 8
// bytes or more (a password printed alone) unless it is a placeholder or a
// plain word.
func bareTokenSpans(line string, out []span) []span {
	var buf [64]word
	ws := splitWords(line, buf[:])
	one := len(ws) == 1
	for _, w := range ws {
		v := line[w.s:w.e]
		if generatedWord(v) || one && len(v) >= 8 && !placeholder(v) && !plainWord(v) && !filePath(v) &&
			!strings.Contains(v, "://") && printableASCII(v) && !isCount(v) {
			out = append(out, span{w.s, w.e, "printed-token"})
		}
	}
	return out
}

// generatedWord reports a word that reads as a generated credential (see
// bareTokenSpans).
func generatedWord(v string) bool {
	if len(v) < 16 || len(v) > 1<<14 || strings.Contains(v, "://") || v[0] == '/' && !randomSegment(v) || strings.Contains(v, "/.") {
		return false
	}
	letters, digits := 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isUpper(c) || isLower(c):
			letters++
		case isDigit(c):
			digits++
		case strings.IndexByte("+/=_-.~:", c) >= 0:
		default:
			return false
		}
	}
	// Without a digit only base64's own alphabet counts (a dotted or
	// snake-case name mixes cases too).
	return letters >= 3 && (digits >= 1 || len(v) >= 20 && mixedCase(v) && !strings.ContainsAny(v, "._-~:")) && !placeholder(v)
}

// mixedCase reports upper and lower case letters in v.
func mixedCase(v string) bool {
	var up, lo bool
	for i := 0; i < len(v); i++ {
		up = up || isUpper(v[i])
		lo = lo || isLower(v[i])
	}
	return up && lo
}

// Output is Text for the output of command (a shell command line): when
// the command's name says it prints a credential (PrintsSecret), the
// generated-looking words it printed are masked too.
func Output(command, s string) (string, int) {
	return OutputCounts(command, s, nil)
}

// OutputCounts is Output that adds, per rule kind, the values it replaced
// to c (c may be nil).
func OutputCounts(command, s string, c Counts) (string, int) {
	if !PrintsSecret(command) {
		return text(s, c)
	}
	return printedText(s, c)
}

// printedText is text with bareTokenSpans on every line (the output of a
// command that prints a credential).
func printedText(s string, c Counts) (string, int) {
	var b strings.Builder
	n := 0
	for _, line := range strings.SplitAfter(s, "\n") {
		body := strings.TrimRight(line, "\r\n")
		if spans := bareTokenSpans(body, nil); len(spans) > 0 {
			red, k := apply(body, spans, c)
			line = red + line[len(body):]
			n += k
		}
		b.WriteString(line)
	}
	out, m := text(b.String(), c)
	return out, n + m
}

// randomSegment reports a slash-separated piece of v of 16 bytes or more
// that mixes upper case, lower case and digits: base64 that begins with
// "/", not a path (whose pieces are names).
func randomSegment(v string) bool {
	for _, p := range strings.Split(v, "/") {
		if len(p) < 16 {
			continue
		}
		var up, lo, dg bool
		for i := 0; i < len(p); i++ {
			c := p[i]
			up = up || isUpper(c)
			lo = lo || isLower(c)
			dg = dg || isDigit(c)
			if !isAlnum(c) && c != '+' && c != '=' {
				up = false
				break
			}
		}
		if up && lo && dg {
			return true
		}
	}
	// Short pieces: base64 whose slashes cut it small. Only base64 bytes,
	// 24 or more, and most pieces mixing upper and lower case (a path's
	// pieces are names: lower case, or one capital).
	if len(v) < 24 {
		return false
	}
	pieces, mixed := 0, 0
	for _, p := range strings.Split(v, "/") {
		if p == "" {
			continue
		}
		pieces++
		var up, lo bool
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !isAlnum(c) && c != '+' && c != '=' {
				return false
			}
			up = up || isUpper(c) && i > 0
			lo = lo || isLower(c)
		}
		if up && lo {
			mixed++
		}
	}
	return pieces > 0 && 2*mixed > pieces
}

// programName reports a word that can name a program: letters, digits and
// "._+-", starting with a letter or digit ("./deploy.sh" is cut to its
// base by the caller), and not an assignment or a call.
func programName(w string) bool {
	if w == "" || len(w) > 64 || !isAlnum(w[0]) {
		return false
	}
	for i := 0; i < len(w); i++ {
		// Lower case: a capitalised word starts a sentence (an agent's
		// prose in place of a command), not a program.
		if c := w[i]; !isLower(c) && !isDigit(c) && strings.IndexByte("._+-", c) < 0 {
			return false
		}
	}
	return true
}

// columnSpans handles a table whose header names a credential column
// ("USERNAME   PASSWORD   HOST", "| user | api_key |"): the header sets
// st.secretCols, and each row below with the header's number of cells has
// the cells of those columns masked when they read as values
// (tableValue). A rule row ("----", "|---|") keeps the state; a blank line
// or a row of another shape ends it.
func columnSpans(line string, f feat, st *lineState, out []span) []span {
	if st.cols == 0 && (f&(fStem|fValue) == 0 || f&fCells == 0) {
		return out // no table being read, and no header here
	}
	p := skipLinePrefix(line)
	body := line[p:]
	if st.cols == 0 && !hasCells(body) {
		return out
	}
	if strings.TrimSpace(body) == "" {
		st.secretCols, st.cols, st.nameCol, st.valueCol = nil, 0, 0, 0
		return out
	}
	var buf [16]seg
	cells := tableCells(body, buf[:])
	if st.cols > 0 {
		if ruleRow(body) {
			return out
		}
		if len(cells) != st.cols {
			st.secretCols, st.cols, st.nameCol, st.valueCol = nil, 0, 0, 0
		} else {
			mask := func(c int) {
				v := body[cells[c].s:cells[c].e]
				if !strings.ContainsAny(v, " \t") && tableValue(v) && credentialValue(v, false, ctxColon, false) {
					out = append(out, span{p + cells[c].s, p + cells[c].e, "table"})
				}
			}
			for _, c := range st.secretCols {
				mask(c)
			}
			if st.valueCol > 0 {
				name := body[cells[st.nameCol-1].s:cells[st.nameCol-1].e]
				if k := strings.LastIndexAny(name, "/.:"); k >= 0 {
					name = name[k+1:]
				}
				if m, weak := matchName(name); m && !weak {
					mask(st.valueCol - 1)
				}
			}
			return out
		}
	}
	if len(cells) < 2 {
		return out
	}
	var secret []int
	nameCol, valueCol := 0, 0
	for i, c := range cells {
		name := body[c.s:c.e]
		if !headerWord(name) {
			return out
		}
		switch strings.ToLower(name) {
		case "name", "key", "parameter", "variable", "secret name":
			if nameCol == 0 {
				nameCol = i + 1
			}
		case "value", "secret value", "secretstring", "data":
			valueCol = i + 1
		}
		if f&fStem == 0 {
			continue
		}
		if m, weak := matchName(name); m && !weak {
			secret = append(secret, i)
		}
	}
	if nameCol == 0 || valueCol == 0 {
		nameCol, valueCol = 0, 0
	}
	if len(secret) > 0 && len(secret) < len(cells) || valueCol > 0 {
		st.secretCols, st.cols, st.nameCol, st.valueCol = secret, len(cells), nameCol, valueCol
	}
	return out
}

// headerWord reports a table header cell: a name of letters, digits, "_",
// "-", "." and single blanks, starting with a letter.
func headerWord(s string) bool {
	if s == "" || len(s) > 40 || !(isUpper(s[0]) || isLower(s[0])) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '_' && c != '-' && c != '.' && c != ' ' {
			return false
		}
	}
	return true
}

// ruleRow reports a table's rule line: dashes, equals signs, pluses,
// colons, blanks and column separators only.
func ruleRow(s string) bool {
	n := 0
	for _, r := range s {
		switch r {
		case '-', '=', '+', ':', ' ', '\t', '|', '│', '─', '┼', '├', '┤', '═', '╪', '┌', '┐', '└', '┘', '┬', '┴':
			if r == '-' || r == '=' || r == '─' || r == '═' {
				n++
			}
		default:
			return false
		}
	}
	return n >= 3
}
