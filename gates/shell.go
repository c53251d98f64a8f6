package gates

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file reads a Bash command the way a shell would, closely enough to
// see through the disguises a model uses to run the orch-hook binary or to
// reach a protected directory: quoting, $IFS, globs, brace expansion,
// variables, code in strings (sh -c, eval, python -c, here-documents) and
// wrappers (env, xargs, find -exec). It is a heuristic lexer, not a shell.
// Where it cannot follow the command (nesting too deep, code or a command
// name only known at run time) it marks the scan suspicious, and the
// exported checks then answer the strict way.

const (
	shMaxDepth  = 8   // nesting of substitutions, subshells and code strings
	shMaxWords  = 256 // words one brace expansion may produce
	shMaxBraces = 64  // brace groups in one word before giving up
	shMaxBases  = 32  // directories a command may cd to before giving up
)

// shWord is one shell word after quote removal.
type shWord struct {
	text    string // quote-removed; expansions verbatim, substitutions as "$()"
	pattern string // text with quoted glob and brace characters backslash-escaped
	dynamic bool   // holds an expansion ($VAR, ${...}, $(...), `...`, $((...)))
	tailDyn bool   // an expansion comes after the word's last literal '/'
	glob    bool   // holds an unquoted * ? or [...]
	brace   bool   // produced by brace expansion
	dynPat  string // text escaped, each expansion a * (what a computed path may be)
	procSub bool   // a process substitution <(...): a file whose content is code here
}

func (w shWord) literal() bool { return !w.dynamic && !w.glob && !w.brace }

type shRedir struct {
	op     string // "<", "<<", "<<-", "<<<", "<>", "<&", ">", ">>", ">|", ">&", "&>", "&>>"
	target shWord
}

// shFeed is text a command reads on stdin: a here-document or here-string.
type shFeed struct {
	text    string
	dynamic bool // the shell expands it before the command reads it
}

// shCmd is one simple command.
type shCmd struct {
	words  []shWord
	redirs []shRedir
	feeds  []shFeed
	piped  bool // stdin is a pipe
	nested bool // parsed from a string that is itself code (sh -c, eval, ...)
	noHead bool // an array literal a=(...): words, but nothing runs
	depth  int
	lead   int // reserved words at the start, as far as counted: firstUnreserved
}

// shScan is every simple command of a command line, nested ones included.
type shScan struct {
	cmds       []*shCmd
	suspicious bool
	budget     int  // bytes left to lex: code strings are lexed again
	envSet     int8 // setsEnvironment, once known: 1 no, 2 yes
}

// shellScan splits cmd into simple commands, then follows the code they
// carry (sh -c strings, eval, find -exec, ...), which adds commands.
func shellScan(cmd string) *shScan {
	sc := &shScan{budget: 16*len(cmd) + 1<<16}
	sc.lex(cmd, 0, false)
	for i := 0; i < len(sc.cmds) && !sc.suspicious; i++ {
		sc.derive(sc.cmds[i])
	}
	return sc
}

// spend accounts for lexing s at depth; it fails (and marks the scan) past
// the limits, which is how nesting and re-lexing stay bounded.
func (sc *shScan) spend(s string, depth int) bool {
	if depth > shMaxDepth || len(s) > sc.budget {
		sc.suspicious = true
		return false
	}
	sc.budget -= len(s)
	return true
}

func (sc *shScan) lex(s string, depth int, nested bool) {
	if !sc.spend(s, depth) {
		return
	}
	l := &shLexer{s: s, depth: depth, nested: nested, sc: sc}
	l.list(0)
	l.readHeredocs()
}

// lexExpansions finds the command substitutions in text the shell expands
// as if double-quoted (an unquoted here-document's body).
func (sc *shScan) lexExpansions(s string, depth int, nested bool) {
	if !sc.spend(s, depth) {
		return
	}
	l := &shLexer{s: s, depth: depth, nested: nested, sc: sc}
	var b shWordBuf
	l.dquote(&b, false)
}

// ---- lexer ----

type shLexer struct {
	s       string
	i       int
	depth   int
	nested  bool
	array   bool
	sc      *shScan
	pending []shHeredoc
}

type shHeredoc struct {
	cmd    *shCmd
	delim  string
	strip  bool // <<- strips leading tabs
	quoted bool // a quoted delimiter: the body is not expanded
}

func (l *shLexer) stopped() bool { return l.i >= len(l.s) || l.sc.suspicious }

func (l *shLexer) peek(n int) byte {
	if l.i+n < len(l.s) {
		return l.s[l.i+n]
	}
	return 0
}

func (l *shLexer) skip(n int) { l.i = min(l.i+n, len(l.s)) }

// enter goes one level deeper; the caller undoes it with l.depth--.
func (l *shLexer) enter() bool {
	l.depth++
	if l.depth > shMaxDepth {
		l.sc.suspicious = true
		return false
	}
	return true
}

// list lexes commands up to the end of input or the byte close, which it
// consumes (')' closes a subshell or a substitution; 0 is none).
func (l *shLexer) list(close byte) {
	cmd := l.newCmd(false)
	for !l.stopped() {
		c := l.s[l.i]
		switch {
		case close != 0 && c == close:
			l.i++
			l.finish(cmd)
			return
		case c == ' ' || c == '\t' || c == '\r':
			l.i++
		case c == '\n':
			l.i++
			l.finish(cmd)
			cmd = l.newCmd(false)
			l.readHeredocs()
		case c == '#':
			l.skipComment()
		case (c == '<' || c == '>') && l.peek(1) == '(':
			cmd.words = append(cmd.words, l.procSubst())
		case c == '<' || c == '>' || c == '&' && l.peek(1) == '>':
			l.redirect(cmd)
		case c == ';' || c == '&' || c == '|' || c == ')':
			piped := l.operator()
			l.finish(cmd)
			cmd = l.newCmd(piped)
		case c == '(' && l.funcParens(cmd):
			l.finish(cmd)
			cmd = l.newCmd(false)
		case c == '(':
			l.paren()
		default:
			l.words(cmd)
			if cmd.funcKeyword() {
				l.funcBody(cmd)
				l.finish(cmd)
				cmd = l.newCmd(false)
			}
		}
	}
	l.finish(cmd)
}

// funcParens reads the () of a function definition, `name () body`.
func (l *shLexer) funcParens(cmd *shCmd) bool {
	if len(cmd.redirs) > 0 || l.i > 0 && l.s[l.i-1] == '=' { // a=(): an array
		return false
	}
	k := cmd.firstUnreserved() // `then f() {` too
	if len(cmd.words) != k+1 || !cmd.words[k].literal() || shIsAssignment(cmd.words[k].text) {
		return false // `function f ()` ended at its name: the () is an empty subshell
	}
	j := l.i + 1
	for j < len(l.s) && (l.s[j] == ' ' || l.s[j] == '\t') {
		j++
	}
	if j >= len(l.s) || l.s[j] != ')' {
		return false
	}
	l.i = j + 1
	l.funcBody(cmd)
	return true
}

// funcKeyword: `function NAME`, whose body follows.
func (c *shCmd) funcKeyword() bool {
	k := c.firstUnreserved()
	return len(c.words) == k+2 && c.words[k].literal() && c.words[k].text == "function"
}

// firstUnreserved is the index of the first word that is not a reserved
// word (then, do, {, ...). The lexer asks after each word, so the count
// goes on from where it stopped (words are only appended): `{ { { ...`
// stays linear.
func (c *shCmd) firstUnreserved() int {
	for c.lead < len(c.words) && c.words[c.lead].literal() && shReserved()[c.words[c.lead].text] {
		c.lead++
	}
	return c.lead
}

// funcBody ends a function's header: its name runs nothing, and its body
// is commands of their own (read as part of the header, its first command
// would go unseen). Commands that run when the function is called are
// nested from here on: never a plain invocation.
func (l *shLexer) funcBody(header *shCmd) {
	header.noHead = true
	l.nested = true
}

func (l *shLexer) newCmd(piped bool) *shCmd {
	return &shCmd{piped: piped, nested: l.nested, noHead: l.array, depth: l.depth}
}

func (l *shLexer) finish(c *shCmd) {
	if len(c.words) > 0 || len(c.redirs) > 0 {
		l.sc.cmds = append(l.sc.cmds, c)
	}
}

func (l *shLexer) skipComment() {
	if j := strings.IndexByte(l.s[l.i:], '\n'); j >= 0 {
		l.i += j
	} else {
		l.i = len(l.s)
	}
}

// operator consumes a control operator and says whether the next command
// reads a pipe.
func (l *shLexer) operator() (piped bool) {
	c := l.s[l.i]
	l.i++
	n := l.peek(0)
	switch {
	case c == '|' && n == '|', c == '&' && n == '&':
		l.i++
	case c == '|':
		if n == '&' {
			l.i++
		}
		return true
	case c == ';':
		for l.peek(0) == ';' || l.peek(0) == '&' {
			l.i++
		}
	}
	return false
}

// paren lexes a parenthesized list. A subshell's commands run as written;
// after '=' it is an array, whose words run nothing; glued to a word it is
// an extglob pattern, whose contents count as nested (never a plain
// invocation).
func (l *shLexer) paren() {
	prev := byte(' ')
	if l.i > 0 {
		prev = l.s[l.i-1]
	}
	nested, array := l.nested, l.array
	switch {
	case prev == '=':
		l.array = true
	case !strings.ContainsRune(" \t\r\n;&|()<>", rune(prev)):
		l.nested = true
	}
	l.i++
	if l.enter() {
		l.list(')')
	}
	l.depth--
	l.nested, l.array = nested, array
}

// sub lexes the body of $( ... ) or <( ... ): real commands, even inside an
// array literal.
func (l *shLexer) sub() {
	array := l.array
	l.array = false
	if l.enter() {
		l.list(')')
	}
	l.depth--
	l.array = array
}

func (l *shLexer) procSubst() shWord {
	l.skip(2)
	l.sub()
	return shWord{text: "$()", pattern: "$()", dynamic: true, tailDyn: true, procSub: true}
}

// words lexes one word (several after brace expansion or $IFS), or the fd
// number of a redirection such as 2>.
func (l *shLexer) words(cmd *shCmd) {
	start := l.i
	ws := l.word()
	if l.i == start {
		l.i++ // cannot happen with list's dispatch; never loop
		return
	}
	if len(ws) == 1 && (l.peek(0) == '<' || l.peek(0) == '>') && shIsFD(ws[0]) {
		l.redirect(cmd)
		return
	}
	cmd.words = append(cmd.words, ws...)
}

// shIsFD: "2" in 2>file, "{fd}" in {fd}>file.
func shIsFD(w shWord) bool {
	t := w.text
	if !w.literal() || t == "" {
		return false
	}
	if t[0] == '{' && t[len(t)-1] == '}' {
		return true
	}
	return strings.Trim(t, "0123456789") == ""
}

// word lexes up to an unquoted blank or operator.
func (l *shLexer) word() []shWord {
	var b shWordBuf
	var out []shWord
	for !l.stopped() {
		c := l.s[l.i]
		switch c {
		case ' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '<', '>':
			return l.flush(&b, out)
		case '\\':
			l.escape(&b)
		case '\'':
			b.quoted(l.single())
		case '"':
			l.dquote(&b, true)
		case '$':
			if l.dollar(&b, false) {
				out = l.flush(&b, out)
			}
		case '`':
			l.backtick(&b)
		default:
			b.bare(c)
			l.i++
		}
	}
	return l.flush(&b, out)
}

func (l *shLexer) escape(b *shWordBuf) {
	switch {
	case l.peek(1) == '\n': // line continuation
		l.skip(2)
	case l.i+1 < len(l.s):
		b.quoted(l.s[l.i+1 : l.i+2])
		l.i += 2
	default:
		b.quoted(`\`)
		l.i++
	}
}

// single reads '...'; unterminated, it runs to the end of input.
func (l *shLexer) single() string {
	l.i++
	end := strings.IndexByte(l.s[l.i:], '\'')
	if end < 0 {
		s := l.s[l.i:]
		l.i = len(l.s)
		return s
	}
	s := l.s[l.i : l.i+end]
	l.i += end + 1
	return s
}

// dquote reads "..." (term) or, without term, text expanded as if it were
// double-quoted.
func (l *shLexer) dquote(b *shWordBuf, term bool) {
	if term {
		l.i++
	}
	b.started = true
	for !l.stopped() {
		c := l.s[l.i]
		switch {
		case c == '"' && term:
			l.i++
			return
		case c == '\\':
			switch l.peek(1) {
			case '\n':
				l.skip(2)
			case '$', '`', '"', '\\':
				b.quoted(l.s[l.i+1 : l.i+2])
				l.i += 2
			default:
				b.quoted(`\`)
				l.i++
			}
		case c == '$':
			l.dollar(b, true)
		case c == '`':
			l.backtick(b)
		default:
			b.quoted(l.s[l.i : l.i+1])
			l.i++
		}
	}
}

// dollar reads an expansion at '$'. It reports an unquoted $IFS or ${IFS},
// which the shell splits away: a word separator.
func (l *shLexer) dollar(b *shWordBuf, quoted bool) (separator bool) {
	n := l.peek(1)
	switch {
	case n == '\'' && !quoted:
		l.i++
		b.quoted(l.ansiC())
	case n == '"' && !quoted:
		l.i++
		l.dquote(b, true)
	case n == '(' && l.peek(2) == '(':
		l.arith(b)
	case n == '(':
		l.skip(2)
		l.sub()
		b.expansion("$()")
	case n == '{':
		raw := l.param(quoted)
		if raw == "${IFS}" && !quoted {
			return true
		}
		b.expansion(raw)
	case shNameStart(n):
		j := l.i + 1
		for j < len(l.s) && shNameChar(l.s[j]) {
			j++
		}
		raw := l.s[l.i:j]
		l.i = j
		if raw == "$IFS" && !quoted {
			return true
		}
		b.expansion(raw)
	case n != 0 && strings.IndexByte("0123456789@*#?-$!", n) >= 0:
		b.expansion(l.s[l.i : l.i+2])
		l.i += 2
	default:
		b.quoted("$")
		l.i++
	}
	return false
}

// param reads ${...}, following what nests in it, and returns it raw.
// Quoted, single quotes inside are literal (as bash reads "${x:-'}").
func (l *shLexer) param(quoted bool) string {
	start := l.i
	l.skip(2)
	var scratch shWordBuf
	if l.enter() {
		for !l.stopped() && l.s[l.i] != '}' {
			switch l.s[l.i] {
			case '\\':
				l.skip(2)
			case '\'':
				if quoted {
					l.i++
				} else {
					l.single()
				}
			case '"':
				l.dquote(&scratch, true)
			case '$':
				l.dollar(&scratch, true)
			case '`':
				l.backtick(&scratch)
			default:
				l.i++
			}
		}
		l.skip(1)
	}
	l.depth--
	return l.s[start:l.i]
}

// arith reads $((...)). One that does not end in "))" is, as bash reads
// it, a command substitution of a subshell: lex it again as that.
func (l *shLexer) arith(b *shWordBuf) {
	start := l.i
	l.skip(3)
	var scratch shWordBuf
	if !l.enter() {
		l.depth--
		return
	}
	defer func() { l.depth-- }()
	open := 0
	for !l.stopped() {
		switch l.s[l.i] {
		case '(':
			open++
			l.i++
		case ')':
			if open > 0 {
				open--
				l.i++
				continue
			}
			if l.peek(1) == ')' {
				l.i += 2
				b.expansion(l.s[start:l.i])
				return
			}
			l.i = start + 2
			l.sub()
			b.expansion("$()")
			return
		case '$':
			l.dollar(&scratch, true)
		case '`':
			l.backtick(&scratch)
		case '\\':
			l.skip(2)
		default:
			l.i++
		}
	}
	b.expansion(l.s[start:l.i])
}

// escapedUntil reads from the delimiter at l.i to its match (a backslash
// escapes the next byte) and returns what lies between; l.i moves past it.
func (l *shLexer) escapedUntil(delim byte) string {
	j := l.i + 1
	for j < len(l.s) && l.s[j] != delim {
		if l.s[j] == '\\' {
			j++
		}
		j++
	}
	body := l.s[l.i+1 : min(j, len(l.s))]
	l.i = min(j+1, len(l.s))
	return body
}

// backtick reads `...`, whose body (with \$ \` \\ unescaped) is commands.
func (l *shLexer) backtick(b *shWordBuf) {
	r := strings.NewReplacer(`\$`, `$`, "\\`", "`", `\\`, `\`)
	l.sc.lex(r.Replace(l.escapedUntil('`')), l.depth+1, l.nested)
	b.expansion("$()")
}

// ansiC reads $'...' (l.i at the quote) and decodes its escapes.
func (l *shLexer) ansiC() string { return shDecodeC(l.escapedUntil('\'')) }

var shRedirOps = []string{"&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">"}

func (l *shLexer) redirect(cmd *shCmd) {
	op := ">"
	for _, o := range shRedirOps {
		if strings.HasPrefix(l.s[l.i:], o) {
			op = o
			break
		}
	}
	l.skip(len(op))
	for l.peek(0) == ' ' || l.peek(0) == '\t' {
		l.i++
	}
	if op == "<<" || op == "<<-" {
		l.heredoc(cmd, op)
		return
	}
	target := l.target()
	cmd.redirs = append(cmd.redirs, shRedir{op: op, target: target})
	if op == "<<<" {
		cmd.feeds = append(cmd.feeds, shFeed{text: target.text, dynamic: target.dynamic})
	}
}

// target reads a redirection's word; a process substitution or a missing
// word is an unknown target.
func (l *shLexer) target() shWord {
	if (l.peek(0) == '<' || l.peek(0) == '>') && l.peek(1) == '(' {
		return l.procSubst()
	}
	if ws := l.word(); len(ws) > 0 {
		return ws[0]
	}
	return shWord{dynamic: true, tailDyn: true}
}

func (l *shLexer) heredoc(cmd *shCmd, op string) {
	start := l.i
	ws := l.word()
	d := shHeredoc{cmd: cmd, strip: op == "<<-", quoted: strings.ContainsAny(l.s[start:l.i], `'"\`)}
	if len(ws) > 0 {
		d.delim = ws[0].text
	}
	cmd.redirs = append(cmd.redirs, shRedir{op: op, target: shWord{text: d.delim, pattern: d.delim}})
	l.pending = append(l.pending, d)
}

// readHeredocs reads the bodies of the here-documents opened on the line
// just ended; an unquoted body's substitutions are commands too.
func (l *shLexer) readHeredocs() {
	docs := l.pending
	l.pending = nil
	for _, d := range docs {
		body := l.heredocBody(d)
		feed := shFeed{text: body, dynamic: !d.quoted && strings.ContainsAny(body, "$`")}
		d.cmd.feeds = append(d.cmd.feeds, feed)
		if feed.dynamic {
			l.sc.lexExpansions(body, l.depth+1, l.nested)
		}
	}
}

func (l *shLexer) heredocBody(d shHeredoc) string {
	var b strings.Builder
	for l.i < len(l.s) {
		line := l.s[l.i:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
			l.i += j + 1
		} else {
			l.i = len(l.s)
		}
		check := strings.TrimSuffix(line, "\r")
		if d.strip {
			check = strings.TrimLeft(check, "\t")
		}
		if check == d.delim {
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// ---- words ----

// shMeta are the characters a quote makes literal in a pattern.
const shMeta = `*?[]{},\`

type shWordBuf struct {
	text, pat strings.Builder
	dynPat    strings.Builder
	started   bool
	dynamic   bool
	tailDyn   bool
}

func (b *shWordBuf) quoted(s string) {
	b.started = true
	b.text.WriteString(s)
	shEscapeTo(&b.pat, s)
	shEscapeTo(&b.dynPat, s)
	if strings.Contains(s, "/") {
		b.tailDyn = false
	}
}

func (b *shWordBuf) bare(c byte) {
	b.started = true
	b.text.WriteByte(c)
	b.pat.WriteByte(c)
	shEscapeTo(&b.dynPat, string(c))
	if c == '/' {
		b.tailDyn = false
	}
}

func (b *shWordBuf) expansion(raw string) {
	b.started = true
	b.text.WriteString(raw)
	shEscapeTo(&b.pat, raw)
	b.dynPat.WriteByte('*')
	b.dynamic, b.tailDyn = true, true
}

// flush ends the word being built, brace-expanding it.
func (l *shLexer) flush(b *shWordBuf, out []shWord) []shWord {
	if !b.started {
		return out
	}
	w := shWord{text: b.text.String(), pattern: b.pat.String(), dynamic: b.dynamic, tailDyn: b.tailDyn, dynPat: b.dynPat.String()}
	*b = shWordBuf{}
	alts, ok := shBraceExpand(w.pattern)
	if !ok {
		l.sc.suspicious = true
	}
	if len(alts) == 1 && alts[0] == w.pattern {
		w.glob = shHasGlob(w.pattern)
		return append(out, w)
	}
	for _, p := range alts {
		out = append(out, shWord{text: shUnescape(p), pattern: p, dynamic: w.dynamic, tailDyn: w.tailDyn, dynPat: w.dynPat, glob: shHasGlob(p), brace: true})
	}
	return out
}

func shEscapeTo(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(shMeta, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
}

func shEscape(s string) string {
	var b strings.Builder
	shEscapeTo(&b, s)
	return b.String()
}

func shUnescape(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// shHasGlob: an unescaped * or ?, or [ with a ] after it.
func shHasGlob(p string) bool {
	lastClose := strings.LastIndexByte(p, ']')
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if lastClose > i+1 {
				return true
			}
		}
	}
	return false
}

// shBraceExpand does bash brace expansion on a pattern: {a,b} gives one
// word per alternative; a sequence {x..y} becomes * (it only makes letters
// or digits). ok is false when the expansion is too large to follow.
func shBraceExpand(p string) (out []string, ok bool) {
	if !strings.Contains(p, "{") {
		return []string{p}, true
	}
	if strings.Count(p, "{") > shMaxBraces || len(p) > 1<<12 {
		if !strings.Contains(p, ",") && !strings.Contains(p, "..") {
			return []string{p}, true
		}
		return []string{p}, false
	}
	work := []string{p}
	for len(work) > 0 {
		s := work[len(work)-1]
		work = work[:len(work)-1]
		open, close, commas := shFindBrace(s)
		if open < 0 {
			if out = append(out, s); len(out) > shMaxWords {
				return out, false
			}
			continue
		}
		pre, post := s[:open], s[close+1:]
		if len(commas) == 0 {
			work = append(work, pre+"*"+post)
			continue
		}
		bounds := append(append([]int{open}, commas...), close)
		for i := len(bounds) - 1; i > 0; i-- {
			work = append(work, pre+s[bounds[i-1]+1:bounds[i]]+post)
		}
		if len(work) > 4*shMaxWords {
			return out, false
		}
	}
	return out, true
}

// shFindBrace finds the first expandable brace group: its braces and its
// top-level commas (none for a sequence).
func shFindBrace(s string) (open, close int, commas []int) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			if c, cm, ok := shBraceGroup(s, i); ok {
				return i, c, cm
			}
		}
	}
	return -1, -1, nil
}

func shBraceGroup(s string, open int) (close int, commas []int, ok bool) {
	depth := 0
	for i := open + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
				continue
			}
			return i, commas, len(commas) > 0 || strings.Contains(s[open+1:i], "..")
		case ',':
			if depth == 0 {
				commas = append(commas, i)
			}
		}
	}
	return 0, nil, false
}

var shCEscapes = sync.OnceValue(func() map[byte]byte {
	return map[byte]byte{'a': 7, 'b': 8, 'e': 27, 'E': 27, 'f': 12, 'n': '\n', 'r': '\r', 't': '\t', 'v': 11, '\\': '\\', '\'': '\'', '"': '"', '?': '?'}
})

// shDecodeC decodes C-style escapes (\x2d \055 \u002d \n ...), as $'...'
// does, and as a script's string literal would.
func shDecodeC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		c := s[i]
		switch {
		case shCEscapes()[c] != 0:
			b.WriteByte(shCEscapes()[c])
		case c == 'x' || c == 'u' || c == 'U':
			digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, k := shDigits(s[i+1:], 16, digits)
			switch {
			case k == 0:
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == 'x':
				b.WriteByte(byte(n))
			default:
				b.WriteRune(shRune(n))
			}
			i += k
		case c >= '0' && c <= '7':
			n, k := shDigits(s[i:], 8, 3)
			b.WriteByte(byte(n))
			i += k - 1
		case c == 'c' && i+1 < len(s):
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

func shRune(n uint64) rune {
	if n > utf8.MaxRune {
		return utf8.RuneError
	}
	return rune(n)
}

// shDigits reads up to limit digits of base from s.
func shDigits(s string, base uint64, limit int) (n uint64, k int) {
	for k < limit && k < len(s) {
		c := s[k] | 0x20 // lower-case a letter
		var d uint64
		switch {
		case s[k] >= '0' && s[k] <= '9':
			d = uint64(s[k] - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return n, k
		}
		if d >= base {
			return n, k
		}
		n = n*base + d
		k++
	}
	return n, k
}

func shNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func shNameChar(c byte) bool { return shNameStart(c) || c >= '0' && c <= '9' }

// ---- commands ----

// shReserved may come before a command word without being it.
var shReserved = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"!": true, "{": true, "}": true, "if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true, "while": true, "until": true, "esac": true}
})

// shNoCommand start compound commands whose first words run nothing.
var shNoCommand = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"for": true, "select": true, "case": true, "function": true}
})

// head is the index of the command word, after assignments and reserved
// words; -1 when the command runs nothing.
func (c *shCmd) head() int {
	if c.noHead {
		return -1
	}
	for i, w := range c.words {
		switch {
		case w.literal() && shReserved()[w.text]:
		case w.literal() && shNoCommand()[w.text]:
			return -1
		case shIsAssignment(w.text):
		default:
			return i
		}
	}
	return -1
}

// shIsAssignment: NAME=..., NAME+=..., NAME[...]=...
func shIsAssignment(t string) bool {
	i := 0
	for i < len(t) && shNameChar(t[i]) {
		i++
	}
	if i == 0 || !shNameStart(t[0]) {
		return false
	}
	if i < len(t) && t[i] == '[' {
		j := strings.IndexByte(t[i:], ']')
		if j < 0 {
			return false
		}
		i += j + 1
	}
	if i < len(t) && t[i] == '+' {
		i++
	}
	return i < len(t) && t[i] == '='
}

// name is the lower-cased base name of word k ("/usr/bin/Env.exe" -> "env").
func (c *shCmd) name(k int) string {
	t := strings.ToLower(c.words[k].text)
	t = t[strings.LastIndexByte(t, '/')+1:]
	return strings.TrimSuffix(t, ".exe")
}

func (c *shCmd) allWords() []shWord {
	if len(c.redirs) == 0 {
		return c.words
	}
	ws := make([]shWord, 0, len(c.words)+len(c.redirs))
	ws = append(ws, c.words...)
	for _, r := range c.redirs {
		ws = append(ws, r.target)
	}
	return ws
}

// shWrap describes a command that runs another: how its options read (as
// getopt_long reads them: clusters, an argument glued or in the next word,
// long options by any unambiguous prefix), so that the command it runs is
// found where the wrapper finds it. An option no table knows makes the
// scan suspicious: which word it runs is then unsure.
type shWrap struct {
	argOpts string // short options taking an argument: the rest of the word, or the next word
	optOpts string // short options taking an optional argument: only the rest of the word
	flags   string // short options taking none; a letter in none of the three is unknown
	longArg string // long options taking an argument (=value or the next word), "name=L" with L its short equivalent
	longs   string // long options taking none (or only as =value)
	skip    int    // positional arguments before the command (timeout's duration)
	assigns bool   // NAME=value arguments (env, sudo; bash's time and coproc take a command that may start with them)
	anyEq   bool   // any argument holding '=' before the command is an assignment (env's putenv, sudo)
	dash    bool   // a lone "-" is an option (env: -i)
	numeric bool   // -N, --N and -+N are options (nice's adjustment)
	anyLong bool   // an unknown long option takes no separate argument (firejail's --opt=value; npm's nopt)
	// unknownTakesArg reads an unknown option as taking the next word (the
	// other reading, effectiveAlt).
	unknownTakesArg bool
	subs            string // it runs a command only after one of these words (npm exec, uv tool run)
	subsOpt         bool   // ... or without one (yarn prettier, pnpm prettier)
	code            string // short options whose argument is shell code (npx -c)
	dirOpt          byte   // the short option naming the directory it runs the command in (env -C, sudo -D)
}

var shWrappers = sync.OnceValue(func() map[string]shWrap {
	npm := shWrap{argOpts: "pcw", flags: "yqs", longArg: "package=p call=c workspace=w prefix cache registry userconfig",
		longs: "yes no quiet silent ignore-existing workspaces include-workspace-root offline prefer-offline prefer-online", anyLong: true, code: "c"}
	npmExec := npm
	npmExec.subs = "exec x"
	return map[string]shWrap{
		"env": {argOpts: "CSuaLPU", flags: "iv0", longArg: "argv0=a chdir=C split-string=S unset=u",
			longs:   "ignore-environment null default-signal ignore-signal block-signal list-signal-handling debug help version",
			assigns: true, anyEq: true, dash: true, dirOpt: 'C'},
		"command": {flags: "pvV"}, "builtin": {}, "exec": {argOpts: "a", flags: "cl"},
		"nohup": {longs: "help version"}, "setsid": {flags: "cfwhV", longs: "ctty fork wait help version"},
		"time":    {argOpts: "fo", flags: "aplqvVh", longArg: "format=f output=o", longs: "append portability quiet verbose help version", assigns: true},
		"nice":    {argOpts: "n", longArg: "adjustment=n", longs: "help version", numeric: true},
		"ionice":  {argOpts: "cnpPu", flags: "thV", longArg: "class=c classdata=n pid=p pgid=P uid=u", longs: "ignore help version"},
		"stdbuf":  {argOpts: "ioe", longArg: "input=i output=o error=e", longs: "help version"},
		"timeout": {argOpts: "ks", flags: "fpv", longArg: "kill-after=k signal=s", longs: "foreground preserve-status verbose help version", skip: 1},
		"sudo": {argOpts: "aCcDghpRrTtUu", flags: "AbBEeHiKklNnPSsVv",
			longArg: "auth-type=a close-from=C login-class=c chdir=D group=g host=h prompt=p chroot=R role=r command-timeout=T type=t other-user=U user=u",
			longs:   "askpass background bell preserve-env edit help set-home login remove-timestamp reset-timestamp list non-interactive preserve-groups stdin shell version validate",
			assigns: true, anyEq: true, dirOpt: 'D'},
		"doas":    {argOpts: "aCu", flags: "Lns"},
		"chroot":  {longArg: "userspec groups", longs: "skip-chdir help version", skip: 1},
		"taskset": {flags: "apchV", longs: "all-tasks pid cpu-list help version", skip: 1},
		"chrt": {argOpts: "TPD", flags: "abdefiopRrmvhV", longArg: "sched-runtime=T sched-period=P sched-deadline=D",
			longs: "all-tasks batch deadline ext fifo idle other pid reset-on-fork rr max verbose help version", skip: 1},
		"flock": {argOpts: "wEc", flags: "sexnouFhV", longArg: "timeout=w wait=w conflict-exit-code=E command=c",
			longs: "shared exclusive unlock nonblock nb close no-fork verbose help version", skip: 1},
		"xargs": {argOpts: "adEIJLnPRSs", optOpts: "eil", flags: "0oprtx",
			longArg: "arg-file=a delimiter=d max-args=n max-procs=P max-chars=s process-slot-var",
			longs:   "null eof replace max-lines interactive no-run-if-empty verbose show-limits exit open-tty help version"},
		"unbuffer": {flags: "p"}, "busybox": {flags: "s", longs: "list list-full install help"},
		"caffeinate": {argOpts: "tw", flags: "dimsu"},
		"strace": {argOpts: "abeEIoOpPsSuUX", flags: "AcCdDfFhiknqrtTvVwxyYzZ",
			longArg: "attach=p columns=a env=E output=o string-limit=s summary-sort-by=S trace=e trace-path=P user=u signal status fault inject",
			longs:   "follow-forks output-separately summary-only summary summary-wall-clock seccomp-bpf help version"},
		"ltrace": {argOpts: "aADeFlnopsuwx", flags: "bcCfhiLrStTV", longArg: "align=a config=F indent=n library=l output=o", longs: "demangle help version"},
		"coproc": {assigns: true}, "chronic": {flags: "ev"}, "ifne": {flags: "n"},
		"torsocks": {argOpts: "uapP", flags: "idq", longArg: "user=u pass=p address=a port=P", longs: "isolate debug quiet shell help version"},
		"firejail": {anyLong: true},
		"unshare": {argOpts: "SGRw", optOpts: "muinpUCT", flags: "frchV",
			longArg: "setuid=S setgid=G root=R wd=w propagation setgroups map-user map-group map-users map-groups load-interp monotonic boottime",
			longs:   "mount uts ipc net pid user cgroup time fork kill-child mount-proc map-root-user map-current-user map-auto keep-caps mount-binfmt help version"},
		"nsenter": {argOpts: "tSGW", optOpts: "muinpUCTrw", flags: "FZaechV", longArg: "target=t setuid=S setgid=G wdns=W",
			longs: "all mount uts ipc net pid cgroup user time root wd preserve-credentials no-fork follow-context env join-cgroup user-parent keep-caps help version"},
		"parallel": {argOpts: "aCdEIjLNnPSs", flags: "0gkmpqrtuvVxX",
			longArg: "arg-file=a colsep=C delimiter=d jobs=j max-args=n max-procs=P sshlogin=S joblog results tmpdir workdir basefile return timeout delay retries halt load memfree tagstring header nice",
			longs:   "null bar eta progress keep-order group ungroup line-buffer tag verbose dry-run pipe pipepart xargs quote will-cite citation shuf no-notice silent cleanup transfer help version"},
		// Package runners: the command they run is judged as written
		// (npx prettier --write, uv run black); a package script (npm run
		// x) is a program the scan does not see.
		"npx": npm, "npm": npmExec,
		"pnpx": {argOpts: "", longArg: "package", longs: "silent", anyLong: true},
		"pnpm": {argOpts: "CF", flags: "rws", longArg: "dir=C filter=F reporter loglevel resume-from workspace-concurrency package",
			longs: "recursive workspace-root silent parallel stream no-bail report-summary aggregate-output", anyLong: true,
			subs: "exec dlx", subsOpt: true, dirOpt: 'C'},
		"yarn": {argOpts: "p", flags: "sq", longArg: "cwd package=p", longs: "silent offline verbose quiet", subs: "run exec dlx", subsOpt: true},
		"bunx": {argOpts: "p", longArg: "package=p", longs: "bun silent verbose"},
		"uvx":  {argOpts: "p", flags: "qv", longArg: "from with python=p with-requirements index-url extra-index-url", longs: "isolated quiet verbose offline no-cache"},
		"uv": {argOpts: "p", flags: "qvm", longArg: "with python=p project directory package extra group env-file index with-requirements from",
			longs: "module=m script frozen locked no-sync isolated no-project all-extras quiet verbose offline no-dev active no-editable", subs: "run tool"},
		"pipx":   {longArg: "spec python index-url pip-args", longs: "no-cache verbose quiet", subs: "run"},
		"poetry": {argOpts: "CP", flags: "qvn", longArg: "directory=C project=P", longs: "quiet verbose no-interaction no-ansi ansi no-plugins no-cache", subs: "run"},
		"bundle": {longArg: "gemfile", longs: "keep-file-descriptors verbose", subs: "exec"},
	}
})

// shTarget is the command a simple command finally runs, through wrappers.
type shTarget struct {
	k       int    // its word, -1 for none
	xargs   bool   // its arguments come from stdin
	repl    string // xargs' replace string (-I)
	last    string // the last wrapper
	unknown bool   // a wrapper's option no table knows: the command is unsure
}

func (c *shCmd) effective() shTarget { return c.effectiveReading(false) }

// effectiveAlt is the other reading of a command whose wrapper has an
// option no table knows: that option takes the next word.
func (c *shCmd) effectiveAlt() shTarget { return c.effectiveReading(true) }

func (c *shCmd) effectiveReading(unknownTakesArg bool) shTarget {
	t := shTarget{k: c.head()}
	for t.k >= 0 {
		name := c.name(t.k)
		wr, ok := shWrappers()[name]
		if !ok || !c.words[t.k].literal() {
			break
		}
		wr.unknownTakesArg = unknownTakesArg
		next, unknown := c.skipWrapper(t.k+1, &wr, name == "xargs", &t.repl, nil)
		if next < 0 {
			break // a runner not running a command (npm install)
		}
		t.xargs = t.xargs || name == "xargs" || name == "parallel"
		t.last = name
		t.unknown = t.unknown || unknown
		t.k = next
		if t.k >= len(c.words) {
			t.k = -1
		}
	}
	return t
}

// shOpt is one option of a wrapper as getopt_long reads it.
type shOpt struct {
	used    int  // words it takes: 1, or 2 with its argument in the next word
	letter  byte // the option that took an argument (a long one's short equivalent), 0 for none
	arg     int  // the word holding that argument (past the end when missing), -1 for none
	off     int  // where the argument starts in that word
	unknown bool // no table knows it: whether it takes the next word is unsure
}

// skipWrapper reads a wrapper's options, assignments and positional
// arguments from word j: the word of the command it runs (-1 for a runner
// without its subcommand, which runs none), and whether an option was
// unknown. visit, when not nil, sees each option and the word after it.
func (c *shCmd) skipWrapper(j int, wr *shWrap, xargs bool, repl *string, visit func(o shOpt, next int)) (next int, unknown bool) {
	subbed, options := wr.subs == "", true
	for j < len(c.words) {
		t := c.words[j].text
		switch {
		case t == "--" && options:
			options = false // NAME=value may still follow (env -- X=1 cmd)
			j++
		case wr.assigns && (shIsAssignment(t) || wr.anyEq && strings.IndexByte(t, '=') > 0 && t[0] != '-'):
			j++
		case wr.dash && t == "-":
			j++
		case options && len(t) > 1 && t[0] == '-':
			if xargs {
				shXargsRepl(c.words, j, repl)
			}
			o := c.wrapperOpt(j, wr)
			unknown = unknown || o.unknown
			if o.unknown && wr.unknownTakesArg && o.used == 1 && !strings.Contains(t, "=") {
				o.used = 2
			}
			if visit != nil {
				visit(o, j+o.used)
			}
			j += o.used
		case !subbed && shListHas(wr.subs, t):
			j++
			if t != "tool" { // uv tool run
				subbed = true
			}
		case !subbed && !wr.subsOpt:
			return -1, unknown
		default:
			return j + wr.skip, unknown
		}
	}
	if !subbed && !wr.subsOpt {
		return -1, unknown
	}
	return j, unknown
}

// shXargsRepl notes xargs' replace string: -I R, -IR, -i[R], --replace[=R].
func shXargsRepl(words []shWord, j int, repl *string) {
	t := words[j].text
	switch {
	case t == "-I":
		if j+1 < len(words) {
			*repl = words[j+1].text
		}
	case t == "-i" || t == "--replace":
		*repl = "{}"
	case strings.HasPrefix(t, "-I") || strings.HasPrefix(t, "-i"):
		*repl = t[2:]
	case strings.HasPrefix(t, "--replace="):
		*repl = t[len("--replace="):]
	}
}

// wrapperOpt reads the option word j of wrapper wr.
func (c *shCmd) wrapperOpt(j int, wr *shWrap) shOpt {
	t := c.words[j].text
	o := shOpt{used: 1, arg: -1}
	if wr.numeric && shNiceNumber(t) {
		return o
	}
	if long, ok := strings.CutPrefix(t, "--"); ok {
		name, _, eq := strings.Cut(long, "=")
		takesArg, short, known := wr.long(name)
		switch {
		case takesArg && eq:
			o.letter, o.arg, o.off = short, j, 3+len(name)
		case takesArg:
			o.letter, o.arg, o.used = short, j+1, 2
		case !known && !eq && !wr.anyLong:
			o.unknown = true
		}
		return o
	}
	for i := 1; i < len(t); i++ {
		f := t[i]
		switch {
		case strings.IndexByte(wr.argOpts, f) >= 0:
			o.letter, o.arg, o.off = f, j, i+1
			if i+1 == len(t) {
				o.arg, o.off, o.used = j+1, 0, 2
			}
			return o
		case strings.IndexByte(wr.optOpts, f) >= 0:
			return o
		case strings.IndexByte(wr.flags, f) < 0:
			o.unknown = true
			return o
		}
	}
	return o
}

// long looks a long option up by name, or by the unambiguous prefix
// getopt_long accepts (an ambiguous one is refused by the program: it is
// unknown here, which is strict).
func (wr *shWrap) long(name string) (takesArg bool, short byte, known bool) {
	if name == "" {
		return false, 0, false
	}
	na, exactA, s := shLong(wr.longArg, name)
	nf, exactF, _ := shLong(wr.longs, name)
	switch {
	case exactA:
		return true, s, true
	case exactF:
		return false, 0, true
	case na+nf != 1:
		return false, 0, false
	}
	return na == 1, s, true
}

// shLong finds name in a space-separated list of long options ("name" or
// "name=L"): n counts the options it is a prefix of, exact says it is one
// of them; short is the (last) match's short equivalent.
func shLong(list, name string) (n int, exact bool, short byte) {
	for list != "" {
		var e string
		e, list, _ = strings.Cut(list, " ")
		full, s, _ := strings.Cut(e, "=")
		if !strings.HasPrefix(full, name) {
			continue
		}
		short = 0
		if s != "" {
			short = s[0]
		}
		if full == name {
			return 1, true, short
		}
		n++
	}
	return n, false, short
}

// shListHas: word is one of a space-separated list.
func shListHas(list, word string) bool {
	for list != "" {
		var e string
		e, list, _ = strings.Cut(list, " ")
		if e == word {
			return true
		}
	}
	return false
}

// shNiceNumber: nice's -N, --N, -+N.
func shNiceNumber(t string) bool {
	if len(t) > 2 && (t[1] == '-' || t[1] == '+') {
		t = t[1:]
	}
	return len(t) > 1 && t[1] >= '0' && t[1] <= '9'
}

var shShells = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true, "yash": true, "posh": true, "fish": true, "csh": true, "tcsh": true, "rbash": true, "ksh93": true, "oksh": true}
})

// shInterp reports whether name is a script interpreter, and which short
// options take code (python -c, perl -e, node -e, ...).
func shInterp(name string) (codeFlags string, ok bool) {
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"):
		return "c", true
	case name == "perl", strings.HasPrefix(name, "perl5"):
		return "eE", true
	case strings.HasPrefix(name, "ruby"), strings.HasPrefix(name, "lua"), name == "osascript", name == "rscript":
		return "e", true
	case name == "node", name == "nodejs", name == "deno", name == "bun":
		return "ep", true
	case strings.HasPrefix(name, "php"):
		return "r", true
	case strings.HasPrefix(name, "tclsh"), name == "wish":
		return "", true
	}
	return "", false
}

// shDashC run the argument of -c / --command as shell code.
var shDashC = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"su": true, "runuser": true, "script": true, "flock": true}
})

// derive follows the code a command carries: strings run as shell code are
// lexed as nested commands; code the scan cannot see (a computed command
// name, code on a pipe, a dynamic -c string) makes the scan suspicious.
func (sc *shScan) derive(c *shCmd) {
	if h := c.head(); h >= 0 {
		sc.deriveHead(c, c.name(h), c.words[h+1:])
	}
	sc.quotedSubstitutions(c)
	t := c.effective()
	if t.unknown {
		// A wrapper's option no table knows: whether it takes the next word
		// is unsure, so both readings are judged. Unsure only when either
		// runs something whose code the scan would follow (a shell, an
		// interpreter, eval) or cannot see; otherwise both run plain
		// programs (`strace --decode-fds ls`, `yarn --frozen-lockfile`),
		// and a writer in either reading counts (writesByCommand).
		if b := c.effectiveAlt(); b.k != t.k && sc.riskyTarget(c, b) {
			sc.suspicious = true
			return
		}
	}
	sc.deriveWrappers(c)
	if t.xargs && t.k < 0 && t.last != "xargs" {
		// `xargs env`, `parallel`: the command itself comes from stdin
		sc.suspicious = true
	}
	if t.k < 0 || sc.suspicious {
		return
	}
	if shOpaqueCommand(c.words[t.k], t.repl) {
		sc.suspicious = true
		return
	}
	name, args := c.name(t.k), c.words[t.k+1:]
	if shShells()[name] {
		sc.deriveProgram(c, t, shProgArgs(args, "c", true), true)
	} else if flags, ok := shInterp(name); ok {
		sc.deriveProgram(c, t, shProgArgs(args, flags, false), false)
	}
	switch name {
	case "eval":
		sc.lexCode(c, args, t.xargs)
	case "trap":
		if len(args) > 0 && !strings.HasPrefix(args[0].text, "-") {
			sc.lexCode(c, args[:1], t.xargs)
		}
	case "source", ".":
		sc.deriveSource(c, t, args)
	case "find":
		sc.findExecs(c, args)
	case "fd", "fdfind":
		sc.fdExecs(c, args)
	case "alias":
		if t.xargs || shAnyDynamic(args) {
			sc.suspicious = true
			return
		}
		// What a name stands for, once aliases expand, runs as code.
		for _, a := range args {
			if _, value, ok := strings.Cut(a.text, "="); ok && !strings.HasPrefix(a.text, "-") {
				sc.lex(value, c.depth+1, true)
			}
		}
	case "hash":
		// hash -p PATH NAME runs PATH for NAME: a command name only known
		// at run time.
		if t.xargs || shAnyDynamic(args) || shHasOption(args, 'p') {
			sc.suspicious = true
		}
	case "watch":
		sc.lexCode(c, shAfterOptions(args, "n", 0), t.xargs)
	case "ssh":
		sc.lexCode(c, shAfterOptions(args, "bcDEeFIiJLlmOopQRSWw", 1), t.xargs)
	}
}

// quotedSubstitutions lexes the $(...) and `...` inside quoted (literal)
// words: bash evaluates such text again in places (PS4, PROMPT_COMMAND,
// array subscripts of test -v / printf -v / unset), so what they run counts.
func (sc *shScan) quotedSubstitutions(c *shCmd) {
	for _, w := range c.words {
		if !w.dynamic && (strings.Contains(w.text, "$(") || strings.Contains(w.text, "`")) {
			sc.lexExpansions(w.text, c.depth+1, true)
		}
	}
}

// deriveHead handles code given to the outer command itself: -c of su,
// runuser, script and flock.
func (sc *shScan) deriveHead(c *shCmd, name string, args []shWord) {
	if !shDashC()[name] {
		return
	}
	for j, a := range args {
		if (a.text == "-c" || a.text == "--command") && j+1 < len(args) {
			sc.lexCode(c, args[j+1:j+2], false)
		}
	}
}

// deriveWrappers follows what the wrappers of c run besides their command:
// the shell code of an option (npx -c), and env's split string (-S,
// --split-string, -iS'...', --split-str=...), which env splits into words
// that take the place of the option: options, NAME=value and the command,
// before the words that follow it. That command line is added as a command
// of its own, as env runs it. The command as written stays too: one more
// command can only make the scan stricter.
func (sc *shScan) deriveWrappers(c *shCmd) {
	k := c.head()
	for k >= 0 && k < len(c.words) && !sc.suspicious {
		name := c.name(k)
		wr, ok := shWrappers()[name]
		if !ok || !c.words[k].literal() {
			return
		}
		var repl string
		split, splitEnd := shOpt{arg: -1}, 0
		next, _ := c.skipWrapper(k+1, &wr, name == "xargs", &repl, func(o shOpt, end int) {
			switch {
			case o.letter == 0:
			case name == "env" && o.letter == 'S' && split.arg < 0:
				split, splitEnd = o, end // env re-reads its arguments from the first -S
			case strings.IndexByte(wr.code, o.letter) >= 0:
				if w, ok := c.optArg(o); ok {
					sc.lexCode(c, []shWord{w}, false)
				}
			}
		})
		if split.arg >= 0 {
			sc.envSplit(c, k, split, splitEnd)
			return
		}
		if next < 0 {
			return
		}
		k = next
	}
}

// envSplit adds the command env runs for an -S string: the words up to env,
// the string's words, and the words after the option.
func (sc *shScan) envSplit(c *shCmd, env int, o shOpt, end int) {
	w, ok := c.optArg(o)
	if !ok {
		return // env refuses a missing argument: it runs nothing
	}
	if w.dynamic || w.glob || !sc.spend(w.text, c.depth+1) {
		sc.suspicious = true
		return
	}
	split, ok := shEnvSplit(w.text)
	if !ok {
		sc.suspicious = true
		return
	}
	rest := c.words[min(end, len(c.words)):]
	words := make([]shWord, 0, env+1+len(split)+len(rest))
	words = append(append(append(words, c.words[:env+1]...), split...), rest...)
	run := *c
	run.words, run.nested, run.depth, run.lead = words, true, c.depth+1, 0
	sc.cmds = append(sc.cmds, &run)
}

// shEnvSplit splits an env -S string as GNU env does (build_argv in
// coreutils' env.c): blanks separate words; '...' and "..." quote (a quote
// starts a word, even an empty one); a backslash escapes \ \' \" \# \$,
// \_ separates words outside double quotes (a space inside them), \c
// ends the string, \f \n \r \t \v are control characters; # at the
// start of a word ends the string. ok is false where env refuses the string
// (an unknown escape, an unterminated quote), and for ${VAR}: its value is
// not known here, and an unset one gives no word at all, which shifts the
// words after it.
func shEnvSplit(s string) (words []shWord, ok bool) {
	var cur strings.Builder
	inWord, sep, sq, dq := false, true, false, false
	add := func(c byte) {
		if sep {
			if inWord {
				words = append(words, shLiteralWord(cur.String()))
				cur.Reset()
			}
			inWord, sep = true, false
		}
		if c != 0 {
			cur.WriteByte(c)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' && !dq, c == '"' && !sq:
			if c == '\'' {
				sq = !sq
			} else {
				dq = !dq
			}
			add(0)
		case strings.IndexByte(" \t\n\v\f\r", c) >= 0 && !sq && !dq:
			sep = true
		case c == '#' && sep:
			return append(words, shLiteralWords(inWord, &cur)...), true
		case c == '$' && !sq:
			return nil, false
		case c == '\\' && (!sq || i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\'')):
			i++
			if i == len(s) {
				return nil, false
			}
			switch n := s[i]; n {
			case '"', '#', '$', '\'', '\\':
				add(n)
			case '_':
				if !dq {
					sep = true
				} else {
					add(' ')
				}
			case 'c':
				if dq {
					return nil, false
				}
				return append(words, shLiteralWords(inWord, &cur)...), true
			case 'f', 'n', 'r', 't', 'v':
				add("\f\n\r\t\v"[strings.IndexByte("fnrtv", n)])
			default:
				return nil, false
			}
		default:
			add(c)
		}
	}
	if sq || dq {
		return nil, false
	}
	return append(words, shLiteralWords(inWord, &cur)...), true
}

// shLiteralWords is the word being built, if one was started.
func shLiteralWords(inWord bool, cur *strings.Builder) []shWord {
	if !inWord {
		return nil
	}
	return []shWord{shLiteralWord(cur.String())}
}

// shLiteralWord is a word that is only text: nothing expands in it.
func shLiteralWord(t string) shWord {
	return shWord{text: t, pattern: shEscape(t), dynPat: shEscape(t)}
}

// shOpaqueCommand: a command word whose name is only known at run time: a
// glob or an expansion in its last component, or xargs' replace string.
func shOpaqueCommand(w shWord, repl string) bool {
	if repl != "" && strings.Contains(w.text, repl) {
		return true
	}
	tail := w.pattern[strings.LastIndexByte(w.pattern, '/')+1:]
	if shHasGlob(tail) {
		return true
	}
	return w.dynamic && (w.tailDyn || tail == "" || tail == "." || tail == "..")
}

// shProg is where an interpreter takes its code from.
type shProg struct {
	codes    []shWord // -c / -e arguments
	wantCode bool     // a code option without its argument
	script   *shWord  // the script file (python -m: the module)
	stdin    bool     // code on stdin
}

var shStdinPaths = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-": true, "/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true}
})

// shProgArgs reads an interpreter's arguments. A shell's -c takes the first
// operand as code; an interpreter's -c/-e takes the rest of its option
// word or the next word.
func shProgArgs(args []shWord, codeFlags string, shell bool) shProg {
	var p shProg
	for j := 0; j < len(args); j++ {
		t := args[j].text
		switch {
		case t == "--":
			if j+1 < len(args) {
				p.operand(args[j+1], shell)
			}
			return p.done()
		case t == "--eval" || t == "--print" || t == "--command":
			p.wantCode = true
			if j+1 < len(args) && !shell {
				p.codes = append(p.codes, args[j+1])
				j++
			}
		case t == "--rcfile" || t == "--init-file" || t == "--require":
			j++
		case strings.HasPrefix(t, "--eval="):
			p.codes = append(p.codes, shWord{text: t[len("--eval="):], dynamic: args[j].dynamic})
		case len(t) > 1 && (t[0] == '-' || t[0] == '+') && !strings.HasPrefix(t, "--"):
			j += p.option(args, j, codeFlags, shell)
		case strings.HasPrefix(t, "--"):
		default:
			p.operand(args[j], shell)
			return p.done()
		}
	}
	return p.done()
}

// option reads one short-option cluster; it returns the extra words used.
func (p *shProg) option(args []shWord, j int, codeFlags string, shell bool) int {
	t := args[j].text
	for i := 1; i < len(t); i++ {
		switch f := t[i]; {
		case shell && f == 'c':
			p.wantCode = true
		case shell && f == 's':
			p.stdin = true
		case shell && (f == 'o' || f == 'O'):
			return 1
		case !shell && f == 'm':
			if j+1 < len(args) {
				p.script = &args[j+1]
			}
			return 1
		case !shell && strings.IndexByte(codeFlags, f) >= 0:
			p.wantCode = true
			if i+1 < len(t) {
				p.codes = append(p.codes, shWord{text: t[i+1:], dynamic: args[j].dynamic})
				return 0
			}
			if j+1 < len(args) {
				p.codes = append(p.codes, args[j+1])
				return 1
			}
			return 0
		}
	}
	return 0
}

func (p *shProg) operand(w shWord, shell bool) {
	if shell && p.wantCode && len(p.codes) == 0 {
		p.codes = append(p.codes, w)
	} else if p.script == nil {
		p.script = &w
	}
}

func (p shProg) done() shProg {
	if len(p.codes) == 0 && (p.script == nil || shStdinPaths()[p.script.text]) {
		p.stdin = true
	}
	return p
}

func (sc *shScan) deriveProgram(c *shCmd, t shTarget, p shProg, shell bool) {
	switch {
	case t.xargs || p.wantCode && len(p.codes) == 0:
		sc.suspicious = true
	case len(p.codes) > 0:
		for _, code := range p.codes {
			if code.dynamic {
				sc.suspicious = true
				return
			}
			if shell {
				sc.lex(code.text, c.depth+1, true)
			}
		}
	case p.stdin:
		sc.stdinCode(c, shell)
	case p.script != nil && p.script.dynamic && (c.takesInput() || p.script.procSub):
		// A computed script path may be /dev/stdin, reading code this
		// command feeds it. Otherwise a script file is unseen whatever its
		// path's spelling (README, "Threat model": scripts in files).
		sc.suspicious = true
	}
}

// takesInput: the command reads something this command line gives it: a
// pipe, a here-document or here-string, or an input redirection.
func (c *shCmd) takesInput() bool {
	if c.piped || len(c.feeds) > 0 {
		return true
	}
	for _, r := range c.redirs {
		if strings.HasPrefix(r.op, "<") {
			return true
		}
	}
	return false
}

// stdinCode handles an interpreter reading its code on stdin: visible
// here-documents are lexed (for a shell), a pipe or a computed input is
// code the scan cannot see.
func (sc *shScan) stdinCode(c *shCmd, shell bool) {
	for _, f := range c.feeds {
		if f.dynamic {
			sc.suspicious = true
			return
		}
		if shell {
			sc.lex(f.text, c.depth+1, true)
		}
	}
	if len(c.feeds) > 0 {
		return
	}
	if c.piped {
		sc.suspicious = true
	}
	for _, r := range c.redirs {
		if strings.HasPrefix(r.op, "<") && r.target.dynamic {
			sc.suspicious = true
		}
	}
}

func (sc *shScan) deriveSource(c *shCmd, t shTarget, args []shWord) {
	if len(args) == 0 {
		return
	}
	switch {
	case t.xargs || args[0].dynamic && (c.takesInput() || args[0].procSub):
		sc.suspicious = true
	case shStdinPaths()[args[0].text]:
		sc.stdinCode(c, true)
	}
}

// lexCode lexes words the shell joins and runs as code (eval, trap, ssh).
// Computed code, or code arriving through xargs, cannot be seen.
func (sc *shScan) lexCode(c *shCmd, args []shWord, fromXargs bool) {
	if len(args) == 0 {
		return
	}
	if fromXargs || shAnyDynamic(args) {
		sc.suspicious = true
		return
	}
	texts := make([]string, len(args))
	for i, a := range args {
		texts[i] = a.text
	}
	sc.lex(strings.Join(texts, " "), c.depth+1, true)
}

// findExecs adds the commands of find's -exec/-ok actions, nested.
func (sc *shScan) findExecs(c *shCmd, args []shWord) {
	for j := 0; j < len(args); j++ {
		switch args[j].text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		end := j + 1
		for end < len(args) && args[end].text != ";" && args[end].text != "+" {
			end++
		}
		seg := args[j+1 : end]
		j = end
		switch {
		case len(seg) == 0:
		case strings.Contains(seg[0].text, "{}") || c.depth+1 > shMaxDepth:
			sc.suspicious = true
			return
		default:
			sc.cmds = append(sc.cmds, &shCmd{words: seg, nested: true, depth: c.depth + 1})
		}
	}
}

// fdExecs adds the commands of fd's -x/--exec and -X/--exec-batch (every
// word after it, up to a ";"), nested.
func (sc *shScan) fdExecs(c *shCmd, args []shWord) {
	for j := 0; j < len(args); j++ {
		if !shFdExec(args[j].text) {
			continue
		}
		end := j + 1
		for end < len(args) && args[end].text != ";" {
			end++
		}
		seg := args[j+1 : end]
		j = end
		switch {
		case len(seg) == 0:
		case strings.Contains(seg[0].text, "{") || c.depth+1 > shMaxDepth:
			sc.suspicious = true
			return
		default:
			sc.cmds = append(sc.cmds, &shCmd{words: seg, nested: true, depth: c.depth + 1})
		}
	}
}

// shFdExec: fd's -x, --exec, -X, --exec-batch, also ending a cluster (-Hx).
func shFdExec(t string) bool {
	switch t {
	case "--exec", "--exec-batch":
		return true
	}
	if len(t) < 2 || t[0] != '-' || t[1] == '-' || t[len(t)-1] != 'x' && t[len(t)-1] != 'X' {
		return false
	}
	for i := 1; i < len(t); i++ {
		if c := t[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// shAfterOptions skips options (argOpts take the next word) and skip
// operands (ssh's host), returning the words that form a command.
func shAfterOptions(args []shWord, argOpts string, skip int) []shWord {
	j := 0
	for j < len(args) && len(args[j].text) > 1 && args[j].text[0] == '-' {
		t := args[j].text
		j++
		if t == "--" {
			break
		}
		if len(t) == 2 && strings.IndexByte(argOpts, t[1]) >= 0 {
			j++
		}
	}
	return args[min(j+skip, len(args)):]
}

func shAnyDynamic(ws []shWord) bool {
	for _, w := range ws {
		if w.dynamic {
			return true
		}
	}
	return false
}

// shDeclares take NAME=value arguments that set variables.
var shDeclares = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"export": true, "declare": true, "typeset": true, "local": true, "readonly": true}
})

// vars collects the values assigned in the command, the last one winning,
// so that $A$B can be read as the name it spells.
func (sc *shScan) vars() map[string]string {
	vars := map[string]string{}
	for _, c := range sc.cmds {
		h := c.head()
		for i, w := range c.words {
			if !shIsAssignment(w.text) || h >= 0 && i > h && !shDeclares()[c.name(h)] {
				continue
			}
			name, val, _ := strings.Cut(w.text, "=")
			appended := strings.HasSuffix(name, "+")
			name, _, _ = strings.Cut(strings.TrimSuffix(name, "+"), "[")
			if appended { // X+=more
				val = vars[name] + val
			}
			vars[name] = val
		}
	}
	return vars
}

// shSpeculate spells a dynamic word two ways: its expansions dropped, and
// replaced by their default/alternate word (${X:-w}) or the value last
// assigned in the command.
func shSpeculate(text string, vars map[string]string) (bare, alt string) {
	var b, a strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] != '$' || i+1 == len(text) {
			b.WriteByte(text[i])
			a.WriteByte(text[i])
			continue
		}
		switch n := text[i+1]; {
		case n == '{':
			end := strings.IndexByte(text[i:], '}')
			if end < 0 {
				end = len(text) - i
			}
			a.WriteString(shParamValue(text[i+2:i+end], vars))
			i += end
		case n == '(':
			end := strings.IndexByte(text[i:], ')')
			if end < 0 {
				end = len(text) - i
			}
			i += end
		case shNameStart(n):
			j := i + 1
			for j < len(text) && shNameChar(text[j]) {
				j++
			}
			a.WriteString(vars[text[i+1:j]])
			i = j - 1
		default:
			i++
		}
	}
	return b.String(), a.String()
}

// shParamValue guesses the value of ${inner}.
func shParamValue(inner string, vars map[string]string) string {
	j := 0
	for j < len(inner) && shNameChar(inner[j]) {
		j++
	}
	name, rest := inner[:j], inner[j:]
	rest = strings.TrimPrefix(rest, ":")
	if v, ok := vars[name]; ok && !strings.HasPrefix(rest, "+") {
		return v
	}
	if rest != "" && strings.IndexByte("-=+?", rest[0]) >= 0 {
		return strings.Trim(rest[1:], `'"`)
	}
	return ""
}

// ---- NamesBinary ----

// NamesBinary reports whether a Bash command names the orch-hook binary (a
// word or path component spelling orch-hook, orch-hook.exe or a release
// name orch-hook-<os>-<arch>, a glob matching one, or the variables
// CLAUDE_PLUGIN_ROOT/CLAUDE_PLUGIN_DATA under which it lives), and whether
// every such place is a plain invocation: the binary as the command word,
// literal arguments plainOK accepts, no stdin redirection. Words are also
// read as text (a commit message, a here-document, a python -c string), so
// any mention outside a plain invocation is not allowed. A command the scan
// cannot follow (its command name or code computed at run time, code piped
// into a shell or an interpreter) counts as naming it, not allowed.
// allowed is true when named is false.
func NamesBinary(cmd string, plainOK func(args []string) bool) (named bool, allowed bool) {
	return shellScan(cmd).namesBinary(plainOK)
}

func (sc *shScan) namesBinary(plainOK func(args []string) bool) (named bool, allowed bool) {
	if sc.suspicious {
		return true, false
	}
	vars := sc.vars()
	allowed = true
	for _, c := range sc.cmds {
		if c.namesBinary(vars) {
			named = true
			allowed = allowed && c.plainInvocation(plainOK, vars)
		}
	}
	return named, allowed
}

func (c *shCmd) namesBinary(vars map[string]string) bool {
	for _, w := range c.allWords() {
		if shWordNamesBinary(w, vars) {
			return true
		}
	}
	for _, f := range c.feeds {
		if shTextNamesBinary(f.text) {
			return true
		}
	}
	return c.findPatternNamesBinary()
}

// plainInvocation: `[VAR=x] [path/]orch-hook literal-args [> out]`, not
// parsed from a code string.
func (c *shCmd) plainInvocation(plainOK func([]string) bool, vars map[string]string) bool {
	k := c.head()
	if c.nested || k < 0 || len(c.feeds) > 0 || plainOK == nil {
		return false
	}
	if w := c.words[k]; !w.literal() || !shIsBinaryName(c.name(k)) {
		return false
	}
	args := []string{}
	for _, a := range c.words[k+1:] {
		if !a.literal() {
			return false
		}
		args = append(args, a.text)
	}
	for _, r := range c.redirs {
		if strings.Contains(r.op, "<") || shWordNamesBinary(r.target, vars) {
			return false
		}
	}
	return plainOK(args)
}

// shTexts are the spellings a word may have at run time: as written, with
// C escapes decoded (a script's "\x2d"), and for a dynamic word with its
// expansions dropped or guessed.
func shTexts(w shWord, vars map[string]string) []string {
	out := []string{w.text}
	if strings.Contains(w.text, `\`) {
		out = append(out, shDecodeC(w.text))
	}
	if w.dynamic {
		bare, alt := shSpeculate(w.text, vars)
		out = append(out, bare, alt)
	}
	return out
}

var shJoinRE = LazyRegexp(`['"]\s*[+.]?\s*['"]`)

// shNorm lower-cases a spelling, joins adjacent string literals as a
// script would ('orch-'+'hook', "a" . "b") and drops backslashes.
func shNorm(s string) string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, `'"`) {
		s = shJoinRE.Regexp().ReplaceAllString(s, "")
	}
	return strings.ReplaceAll(s, `\`, "")
}

func shWordNamesBinary(w shWord, vars map[string]string) bool {
	for _, t := range shTexts(w, vars) {
		if shTextNamesBinary(t) {
			return true
		}
	}
	if w.glob {
		for _, comp := range strings.Split(strings.ToLower(w.pattern), "/") {
			if shGlobNamesBinary(comp) {
				return true
			}
		}
	}
	return false
}

func shTextNamesBinary(s string) bool {
	s = shNorm(s)
	if strings.Contains(s, "claude_plugin_root") || strings.Contains(s, "claude_plugin_data") {
		return true
	}
	for _, tok := range strings.FieldsFunc(s, shNotNameRune) {
		if shIsBinaryName(tok) {
			return true
		}
	}
	return false
}

func shNotNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_')
}

var shOSes = []string{"linux", "darwin", "windows", "freebsd", "openbsd", "netbsd", "dragonfly", "solaris", "illumos", "aix", "android", "ios", "plan9"}

// shIsBinaryName: orch-hook, orch-hook.exe, orch-hook-<os>-<arch>[.exe]
// (lower-case; a trailing dot, as at the end of a sentence, is ignored).
func shIsBinaryName(tok string) bool {
	tok = strings.TrimSuffix(strings.TrimRight(tok, "."), ".exe")
	rest, ok := strings.CutPrefix(tok, "orch-hook")
	if !ok || rest == "" {
		return ok
	}
	if rest[0] != '-' && rest[0] != '_' {
		return false
	}
	for _, os := range shOSes {
		if strings.HasPrefix(rest[1:], os) {
			return true
		}
	}
	return false
}

// shBinaryNames are the names a glob is tried against.
var shBinaryNames = sync.OnceValue(func() []string {
	names := []string{"orch-hook", "orch-hook.exe"}
	for _, os := range []string{"linux", "darwin", "windows", "freebsd"} {
		for _, arch := range []string{"amd64", "arm64", "386", "arm"} {
			names = append(names, "orch-hook-"+os+"-"+arch, "orch-hook-"+os+"-"+arch+".exe")
		}
	}
	return names
})

// shGlobNamesBinary: a glob component that matches a binary name, pins at
// least 3 characters, and does not also match the same name with
// "orch-hook" replaced (so *.exe or *-amd64 are not taken for it).
func shGlobNamesBinary(comp string) bool {
	if !shHasGlob(comp) || shGlobLiterals(comp) < 3 {
		return false
	}
	for _, n := range shBinaryNames() {
		if shMatch(comp, n) && !shMatch(comp, strings.Replace(n, "orch-hook", "abcd-wxyz", 1)) {
			return true
		}
	}
	return false
}

// shGlobLiterals counts the characters a pattern pins: literals, and one
// per bracket expression.
func shGlobLiterals(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?':
			continue
		case '\\':
			i++
		case '[':
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				i += j + 1
			}
		}
		n++
	}
	return n
}

// shMatch is path.Match with the shell's [!...] negation (path.Match
// spells it [^...]).
func shMatch(pattern, name string) bool {
	ok, err := path.Match(strings.ReplaceAll(pattern, "[!", "[^"), name)
	return ok && err == nil
}

// findPatternNamesBinary: find's -name/-path patterns are globs even when
// quoted, and -regex a regular expression.
func (c *shCmd) findPatternNamesBinary() bool {
	t := c.effective()
	if t.k < 0 || c.name(t.k) != "find" {
		return false
	}
	args := c.words[t.k+1:]
	for j := 0; j+1 < len(args); j++ {
		pat := strings.ToLower(args[j+1].text)
		switch args[j].text {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname":
			for _, comp := range strings.Split(pat, "/") {
				if shGlobNamesBinary(comp) {
					return true
				}
			}
		case "-regex", "-iregex":
			if shRegexNamesBinary(pat) {
				return true
			}
		}
	}
	return false
}

func shRegexNamesBinary(expr string) bool {
	re, err := regexp.Compile(`(?i)^(?:` + expr + `)$`)
	if err != nil {
		return false
	}
	for _, n := range shBinaryNames() {
		decoy := strings.Replace(n, "orch-hook", "abcd-wxyz", 1)
		for _, dir := range []string{"", "./", "/p/bin/"} {
			if re.MatchString(dir+n) && !re.MatchString(dir+decoy) {
				return true
			}
		}
	}
	return false
}

// ---- MentionsPath ----

// MentionsPath reports whether a Bash command may denote dir (relative to
// the project root, e.g. ".orchestrator/state") or something under it: a
// word relative to cwdRel (the shell's directory relative to the root, ""
// for the root) or to a directory the command cd's to, an absolute word
// containing /dir, or a glob whose components match dir's. Globs follow the
// shell: * and ? do not match a leading dot (unless the command mentions
// dotglob), so `rm -rf *` does not reach .orchestrator but `.*` and `.o*`
// do. A word with expansions counts when its literal parts match dir's
// components ("$(...)"/state). Words naming a parent of dir (".", "..",
// ".orchestrator" for ".orchestrator/state") do not count: combine with the
// parent and ChangesFiles. True when cwdRel is under dir, when a cd target
// is computed at run time, and when the scan cannot follow the command.
func MentionsPath(cmd, cwdRel, dir string) bool {
	return shellScan(cmd).mentionsPath(cwdRel, dir)
}

func (sc *shScan) mentionsPath(cwdRel, dir string) bool {
	want := strings.Split(path.Clean(strings.ToLower(dir)), "/")
	cwd := path.Clean(strings.ToLower(cwdRel))
	if want[0] == "." || shUnder(strings.Split(cwd, "/"), want) {
		return true
	}
	if sc.suspicious {
		return true
	}
	bases, unknown := sc.bases(shEscape(cwd))
	if unknown {
		return true
	}
	m := shMatcher{want: want, bases: bases, dotglob: sc.dotglob()}
	vars := sc.vars()
	for _, c := range sc.cmds {
		for _, w := range c.allWords() {
			if m.word(w, vars) {
				return true
			}
		}
		for _, f := range c.feeds {
			if m.text(f.text) {
				return true
			}
		}
	}
	return false
}

func shUnder(p, want []string) bool {
	if len(p) < len(want) {
		return false
	}
	for k, d := range want {
		if p[k] != d {
			return false
		}
	}
	return true
}

// bases are the directories relative words may be relative to: the
// session's, and every directory the command changes to: cd and pushd
// (also through builtin or command), and the -C/--directory/--chdir
// options of env, sudo, git, make and tar (all of them, for every word:
// subshells and order are not followed). unknown: a directory only known
// at run time (a computed target, cd - or ~-, popd, CDPATH).
func (sc *shScan) bases(start string) (bases []string, unknown bool) {
	bases = []string{start}
	// cd looks a relative target up in CDPATH's directories first: those
	// the command sets are followed, any other value is unknown.
	var cdpath []string
	cdpathSet, cdpathUnknown := false, false
	for _, c := range sc.cmds {
		for _, w := range c.words {
			if strings.Contains(w.text, "CDPATH") && !cdpathSet {
				value, ok := sc.vars()["CDPATH"]
				cdpathSet, cdpathUnknown = true, !ok || strings.ContainsAny(value, "$`")
				cdpath = strings.Split(value, ":")
			}
		}
	}
	for _, c := range sc.cmds {
		targets := c.dirOptions()
		if t := c.effective(); t.k >= 0 {
			switch c.name(t.k) {
			case "cd", "pushd":
				args := shAfterOptions(c.words[t.k+1:], "", 0)
				switch {
				case len(args) > 0:
					targets = append(targets, args[0])
					if rel := args[0].text; cdpathSet && !shIsAbs(rel) && !strings.HasPrefix(rel, ".") {
						if cdpathUnknown || args[0].dynamic {
							return nil, true
						}
						for _, dir := range cdpath {
							if dir == "" {
								dir = "." // an empty entry is the current directory
							}
							targets = append(targets, shWord{text: dir + "/" + rel, pattern: shEscape(dir) + "/" + args[0].pattern})
						}
					}
				case c.name(t.k) == "pushd":
					return nil, true // swaps with the directory stack's top
				default:
					targets = append(targets, shWord{text: "~", pattern: "~"})
				}
			case "popd":
				return nil, true
			}
		}
		for _, w := range targets {
			if w.dynamic || w.text == "-" || strings.HasPrefix(w.text, "~-") || strings.HasPrefix(w.text, "+") {
				return nil, true
			}
			target := shPatNorm(w.pattern)
			for _, b := range bases {
				if next := shJoin(b, target); !slices.Contains(bases, next) {
					bases = append(bases, next)
				}
			}
			if len(bases) > shMaxBases {
				return nil, true
			}
		}
	}
	return bases, false
}

// shDirOptions are the options that run a command in another directory,
// by command: env -C DIR, sudo -D DIR, git -C DIR, make -C DIR, tar -C DIR
// (and the long forms).
var shDirOptions = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"env": {"-C", "--chdir"}, "sudo": {"-D", "--chdir"}, "git": {"-C"},
		"make": {"-C", "--directory"}, "gmake": {"-C", "--directory"}, "tar": {"-C", "--directory"},
	}
})

// dirOptions are the directories c's programs (its wrappers, then the
// command they run) are told to change to.
func (c *shCmd) dirOptions() []shWord {
	var out []shWord
	k := c.head()
	for k >= 0 && k < len(c.words) {
		name := c.name(k)
		opts := shDirOptions()[name]
		for j := k + 1; j < len(c.words) && len(opts) > 0; j++ {
			t := c.words[j].text
			if t == "--" {
				break
			}
			for _, o := range opts {
				switch {
				case t == o && j+1 < len(c.words):
					out = append(out, c.words[j+1])
				case strings.HasPrefix(o, "--") && strings.HasPrefix(t, o+"="):
					out = append(out, shWord{text: t[len(o)+1:], pattern: shEscape(t[len(o)+1:]), dynamic: c.words[j].dynamic})
				case len(o) == 2 && len(t) > 2 && strings.HasPrefix(t, o) && name != "git":
					out = append(out, shWord{text: t[2:], pattern: shEscape(t[2:]), dynamic: c.words[j].dynamic})
				}
			}
		}
		wr, ok := shWrappers()[name]
		if !ok || !c.words[k].literal() {
			break
		}
		var repl string
		k, _ = c.skipWrapper(k+1, &wr, name == "xargs", &repl, func(o shOpt, _ int) {
			if wr.dirOpt != 0 && o.letter == wr.dirOpt { // env -iC DIR, --ch=DIR
				if w, ok := c.optArg(o); ok {
					out = append(out, w)
				}
			}
		})
	}
	return out
}

// optArg is the argument an option took (env -S's string, -C's directory),
// as a word of its own.
func (c *shCmd) optArg(o shOpt) (shWord, bool) {
	if o.arg < 0 || o.arg >= len(c.words) {
		return shWord{}, false
	}
	w := c.words[o.arg]
	if o.off == 0 {
		return w, true
	}
	t := w.text[o.off:]
	return shWord{text: t, pattern: shEscape(t), dynamic: w.dynamic, tailDyn: w.tailDyn, dynPat: shEscape(t), glob: w.glob}, true
}

func shJoin(base, p string) string {
	if shIsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(base, p)
}

func shIsAbs(p string) bool { return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") }

func (sc *shScan) dotglob() bool {
	for _, c := range sc.cmds {
		for _, w := range c.words {
			t := strings.ToLower(w.text)
			if strings.Contains(t, "dotglob") || strings.Contains(t, "globdot") || strings.HasPrefix(t, "globignore=") {
				return true
			}
		}
	}
	return false
}

// shPatNorm lower-cases a pattern and drops its literal backslashes.
func shPatNorm(p string) string {
	return strings.ReplaceAll(strings.ToLower(p), `\\`, "")
}

type shMatcher struct {
	want    []string
	bases   []string
	dotglob bool
}

func (m *shMatcher) word(w shWord, vars map[string]string) bool {
	if w.glob && m.pattern(shPatNorm(w.pattern)) {
		return true
	}
	if w.dynamic {
		p := shPatNorm(w.dynPat)
		_, value, assigned := strings.Cut(p, "=") // X=$(...)/state
		if m.computed(p) || assigned && m.computed(value) {
			return true
		}
	}
	for _, t := range shTexts(w, vars) {
		if m.text(t) {
			return true
		}
	}
	return false
}

// text tries a literal spelling whole, and split into path-like tokens
// (as found in --opt=path or a script's string literals; a token's glob
// characters count, as a script may glob).
func (m *shMatcher) text(s string) bool {
	s = shNorm(s)
	if m.pattern(shEscape(s)) {
		return true
	}
	for _, tok := range strings.FieldsFunc(s, shNotPathRune) {
		if m.pattern(tok) || len(tok) > 2 && tok[0] == '-' && m.pattern(tok[2:]) {
			return true
		}
	}
	return false
}

func shNotPathRune(r rune) bool {
	return r <= ' ' || strings.ContainsRune("'\"`;|&()<>{}=,:$#", r)
}

// computed matches a word holding expansions, each a * that may be
// anything (a dot name, an absolute path): "$(...)"/state may be
// .orchestrator/state. It needs 3 literal characters of dir's components
// as evidence, so "$f" or "$TMPDIR/x" alone do not count; a path computed
// entirely at run time is not seen.
func (m *shMatcher) computed(p string) bool {
	if strings.HasPrefix(p, "*") || shIsAbs(p) {
		return m.computedAt(path.Clean(p))
	}
	for _, b := range m.bases {
		if m.computedAt(shJoin(b, p)) {
			return true
		}
	}
	return false
}

func (m *shMatcher) computedAt(full string) bool {
	p := strings.Split(full, "/")
	for i := 0; i+len(m.want) <= len(p); i++ {
		evidence := 0
		for k, d := range m.want {
			if !shCompMatch(p[i+k], d, true) {
				evidence = -1
				break
			}
			evidence += len(shUnescape(strings.ReplaceAll(p[i+k], "*", "")))
		}
		if evidence >= 3 {
			return true
		}
	}
	return false
}

func (m *shMatcher) pattern(p string) bool {
	if p == "" {
		return false
	}
	if shIsAbs(p) {
		return m.align(strings.Split(path.Clean(p), "/"), true)
	}
	for _, b := range m.bases {
		// Anywhere in the path, not only at its start: a link made in the
		// same command (ln -s . s; echo > s/.orchestrator/...) leads back.
		if m.align(strings.Split(path.Join(b, p), "/"), true) {
			return true
		}
	}
	return false
}

// align matches dir's components at the start of p, or (for an absolute
// path or one leaving the project) anywhere in it.
func (m *shMatcher) align(p []string, loose bool) bool {
	last := 0
	if loose {
		last = len(p) - len(m.want)
	}
	for i := 0; i <= last && i+len(m.want) <= len(p); i++ {
		if m.matchAt(p[i:]) {
			return true
		}
	}
	return false
}

func (m *shMatcher) matchAt(p []string) bool {
	for k, d := range m.want {
		if !shCompMatch(p[k], d, m.dotglob) {
			return false
		}
	}
	return true
}

func shCompMatch(pat, name string, dotglob bool) bool {
	if !shHasGlob(pat) {
		return shUnescape(pat) == name
	}
	if strings.HasPrefix(name, ".") && !dotglob && (pat[0] == '*' || pat[0] == '?') {
		return false
	}
	return shMatch(pat, name)
}

// ---- ChangesAbove ----

// ChangesAbove reports whether a Bash command that changes files may reach
// dir (relative to the project root) through a directory above it, below
// the root, without naming dir: the command runs there (the session's
// directory, a cd or pushd target, a -C option: `cd specs; tar -xf x.tar`
// or `git checkout .` write into dir unnamed), or a command that changes
// files names that directory itself (`cp -r x specs`, `rm -rf specs`,
// `mkdir -p specs`). A file beside dir (specs/README.md) does not count,
// nor does the root (SweepsProject's). True when the scan cannot follow
// the command or a directory is only known at run time.
func ChangesAbove(cmd, cwdRel, dir string) bool {
	sc := shellScan(cmd)
	return sc.changesFiles() && sc.changesAbove(cwdRel, dir)
}

// changesAbove is ChangesAbove for a command known to change files.
func (sc *shScan) changesAbove(cwdRel, dir string) bool {
	want := strings.Split(path.Clean(strings.ToLower(dir)), "/")
	if len(want) < 2 || want[0] == "." || want[0] == ".." {
		return false
	}
	if sc.suspicious {
		return true
	}
	bases, unknown := sc.bases(shEscape(path.Clean(strings.ToLower(cwdRel))))
	if unknown {
		return true
	}
	m := shMatcher{want: want, bases: bases, dotglob: sc.dotglob()}
	for _, b := range bases {
		if m.parentAt(b) {
			return true
		}
	}
	vars := sc.vars()
	for _, c := range sc.cmds {
		// A command that writes only by redirection writes its targets;
		// its other words are data (`echo specs > notes.txt`).
		var words []shWord
		switch {
		case sc.writesByCommand(c):
			words = c.allWords()
		case c.writesByRedirect():
			for _, r := range c.redirs {
				words = append(words, r.target)
			}
		}
		_, interp := shInterp(c.name(max(c.effective().k, 0)))
		for _, w := range words {
			if w.glob && m.parent(shPatNorm(w.pattern)) {
				return true
			}
			for _, t := range shTexts(w, vars) {
				t = shNorm(t)
				if m.parent(shEscape(t)) || m.parentOption(t) {
					return true
				}
				if !interp {
					continue
				}
				// Code: its string literals may be paths.
				for _, tok := range strings.FieldsFunc(t, shNotPathRune) {
					if m.parent(tok) {
						return true
					}
				}
			}
		}
	}
	return false
}

// parentOption: an option's value names a directory above m.want
// (--directory=specs, -Cspecs).
func (m *shMatcher) parentOption(t string) bool {
	if len(t) < 3 || t[0] != '-' {
		return false
	}
	if _, value, ok := strings.Cut(t, "="); ok {
		return m.parent(shEscape(value))
	}
	return t[1] != '-' && m.parent(shEscape(t[2:]))
}

// parent: the pattern p, relative to one of the bases (or absolute),
// names a directory above m.want, below the root.
func (m *shMatcher) parent(p string) bool {
	if p == "" {
		return false
	}
	if shIsAbs(p) {
		return m.parentAt(path.Clean(p))
	}
	for _, b := range m.bases {
		if m.parentAt(shJoin(b, p)) {
			return true
		}
	}
	return false
}

// parentAt: full (relative to the root, or absolute: then by its last
// components, the root being unknown here) is a directory above m.want,
// below the root.
func (m *shMatcher) parentAt(full string) bool {
	comps := strings.Split(full, "/")
	for n := 1; n < len(m.want); n++ {
		if len(comps) < n || !shIsAbs(full) && len(comps) != n {
			continue
		}
		if m.matchComps(comps[len(comps)-n:], m.want[:n]) {
			return true
		}
	}
	return false
}

func (m *shMatcher) matchComps(p, want []string) bool {
	for k, d := range want {
		if !shCompMatch(p[k], d, m.dotglob) {
			return false
		}
	}
	return true
}

// ---- ChangesFiles ----

// ChangesFiles reports whether a Bash command may change files. It is a
// heuristic over the common tools, not a proof: an output redirection to a
// file, sed -i, perl, find -delete/-exec, awk printing to a file, a script
// interpreter or a shell running code, git, the file utilities in
// shWriters, and the tools that write by an option or an operand
// (shWriteRules: sort -o, uniq IN OUT, prettier --write, black, ...), also
// when such an option may be computed on the command line or come from
// xargs; a command the scan cannot follow counts. Any other program (make,
// npm run, a script) may write files unseen.
func ChangesFiles(cmd string) bool { return shellScan(cmd).changesFiles() }

func (sc *shScan) changesFiles() bool {
	if sc.suspicious {
		return true
	}
	for _, c := range sc.cmds {
		if c.writesByRedirect() || sc.writesByCommand(c) {
			return true
		}
	}
	return false
}

var shDevices = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true}
})

// writesByRedirect: an output redirection to a file. A device (2>/dev/null,
// &>/dev/null) or a descriptor (2>&1, >&2, 3>&1-, >&-) is not one.
func (c *shCmd) writesByRedirect() bool {
	for _, r := range c.redirs {
		switch r.op {
		case ">", ">>", ">|", "&>", "&>>", "<>":
		case ">&":
			if shIsDescriptor(r.target) {
				continue
			}
		default:
			continue
		}
		if !shIsDevice(r.target) {
			return true
		}
	}
	return false
}

// shIsDescriptor: >&'s target when it names a descriptor: 1, 1- (moved),
// - (closed). Anything else (>&{x}, >&file) is a file name to bash.
func shIsDescriptor(w shWord) bool {
	fd := strings.TrimSuffix(w.text, "-")
	return w.literal() && strings.Trim(fd, "0123456789") == "" && (fd != "" || w.text == "-")
}

// shIsDevice: a literal device path, spelled exactly: /dev/null, or
// /dev/fd/N with N digits (/dev/fd/../.. leaves /dev: it is a file).
func shIsDevice(w shWord) bool {
	if !w.literal() {
		return false
	}
	if fd, ok := strings.CutPrefix(w.text, "/dev/fd/"); ok {
		return fd != "" && strings.Trim(fd, "0123456789") == ""
	}
	return shDevices()[w.text]
}

// shWriters are commands that change files whatever their arguments.
var shWriters = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"rm": true, "rmdir": true, "mv": true, "cp": true, "unlink": true, "truncate": true, "ln": true,
		"chmod": true, "chown": true, "chgrp": true, "tee": true, "dd": true, "install": true, "rsync": true,
		"tar": true, "unzip": true, "touch": true, "mkdir": true, "git": true, "patch": true, "shred": true,
		"sponge": true, "mkfifo": true, "mknod": true, "mktemp": true, "split": true, "csplit": true,
		"gzip": true, "gunzip": true, "bzip2": true, "bunzip2": true, "xz": true, "unxz": true, "zstd": true,
		"unzstd": true, "zip": true, "7z": true, "7za": true, "rename": true, "setfacl": true, "chattr": true,
		"ed": true, "ex": true, "vi": true, "vim": true, "nvim": true, "emacs": true, "nano": true,
		"wget": true, "scp": true, "sftp": true, "ssh": true, "cpio": true, "script": true, "sudoedit": true,
		"link": true, "fallocate": true, "pigz": true, "unpigz": true, "lz4": true, "lzma": true, "unlzma": true,
		"lzip": true, "brotli": true, "pbzip2": true, "compress": true, "uncompress": true, "bsdtar": true,
		"gtar": true, "pax": true, "ar": true, "unrar": true, "7zz": true, "hardlink": true, "prename": true,
		"perl-rename": true, "mmv": true, "srm": true, "wipe": true, "setfattr": true,
		"hg": true, "svn": true, "jj": true, "fossil": true, "bzr": true, "rclone": true, "aria2c": true,
		"mogrify": true, "ffmpeg": true,
	}
})

func (sc *shScan) writesByCommand(c *shCmd) bool {
	if c.wrapperWrites() {
		return true
	}
	t := c.effective()
	if t.unknown {
		if b := c.effectiveAlt(); b.k != t.k && sc.writesByTarget(c, b) {
			return true
		}
	}
	return sc.writesByTarget(c, t)
}

// riskyTarget: the command the other reading runs is code the scan would
// have to follow, or cannot see: a shell, an interpreter, eval/source, or
// a computed name. (The first reading is followed as usual.)
func (sc *shScan) riskyTarget(c *shCmd, t shTarget) bool {
	if t.k < 0 {
		return false
	}
	if shOpaqueCommand(c.words[t.k], t.repl) || !c.words[t.k].literal() {
		return true
	}
	name := c.name(t.k)
	_, interp := shInterp(name)
	return interp || shShells()[name] || name == "eval" || name == "source" || name == "." || name == "exec" || name == "command" || name == "builtin"
}

// writesByTarget judges the command one reading runs.
func (sc *shScan) writesByTarget(c *shCmd, t shTarget) bool {
	if t.k < 0 {
		return false
	}
	name, args := c.name(t.k), c.words[t.k+1:]
	_, interp := shInterp(name)
	switch {
	case name == "git" && !t.xargs && shGitReads(c.words[t.k], args) && !sc.setsEnvironment():
		return false
	case shWriters()[name] || shHasArg(args, "--in-place", "--in-place="):
		return true
	case interp || shShells()[name] || name == "source" || name == ".":
		return !shOnlyVersion(args)
	case !shOptionWriters()[name] && shWriteRules()[shToolName(name)] == nil:
		return false
	case t.xargs || sc.computedOption(args):
		return true // its options may come from stdin or be computed: sed $X, xargs sort
	}
	switch name {
	case "sed":
		return sc.computedCode(args) || shSedWrites(args)
	case "awk", "gawk", "mawk", "nawk":
		return sc.computedCode(args) || shAwkWrites(args)
	case "find":
		return shHasArg(args, "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls")
	case "curl":
		return shCurlWrites(args)
	case "xxd":
		return shXxdWrites(args)
	case "fd", "fdfind", "rg":
		return shRunsOverFiles(name, args)
	}
	for _, r := range shWriteRules()[shToolName(name)] {
		if r.writes(args, nil) {
			return true
		}
	}
	return false
}

// shOptionWriters write files only with some options or arguments, read
// by their own functions; shWriteRules has the others.
var shOptionWriters = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"sed": true, "awk": true, "gawk": true, "mawk": true, "nawk": true, "find": true, "curl": true,
		"xxd": true, "fd": true, "fdfind": true, "rg": true}
})

// shWriteRule says when a command that writes files only with some of its
// arguments (sort -o, prettier --write, uniq IN OUT, terraform fmt) does.
type shWriteRule struct {
	sub      string // only after this subcommand word (terraform fmt, ruff format)
	argOpts  string // its short options that take an argument, to read clusters (sort -to x)
	letters  string // short options that write, in any cluster
	longs    string // long options that write, space-separated: any prefix counts, as getopt_long takes it
	words    string // arguments that write as spelled (-m, --fix)
	unless   string // arguments that make it only check or print (black --check), as spelled
	always   bool   // it writes unless one of unless (black, mdformat)
	output   int    // its n-th operand is a file it writes (uniq IN OUT); "-" is stdout
	operands int    // it rewrites files in place from this many operands on (sd FIND REPLACE FILE)
	markup   bool   // it formats Markdown or JSON, the plan's and the state's formats: over the project root it sweeps .orchestrator
	cwd      bool   // without a path it formats the current directory (dprint fmt, biome format --write)
}

// shWriteRules are the commands that write by their arguments: file
// utilities with an output option, in-place editors and formatters (which
// rewrite the files they are given; without a check option, most by
// default). A formatter over a directory reaches .orchestrator only if it
// formats Markdown or JSON (markup): gofmt -w . or black . change no file
// there, as today's rule for whole-tree sweeps has it (SweepsProject).
var shWriteRules = sync.OnceValue(func() map[string][]shWriteRule {
	gofmt := []shWriteRule{{words: "-w --w -w=true --w=true"}}
	inPlace := []shWriteRule{{letters: "i", longs: "in-place"}}
	lint := []shWriteRule{{words: "--fix -o --cache --init", longs: "output-file cache-location cache-file"}}
	biome := func(sub string) shWriteRule {
		return shWriteRule{sub: sub, words: "--write --apply --apply-unsafe --fix --unsafe", markup: true, cwd: true}
	}
	dos2unix := []shWriteRule{{argOpts: "c", operands: 1, unless: "-i --info -V --version -h --help"}} // in place; none: a filter
	markdownlint := []shWriteRule{{argOpts: "cipr", letters: "fo", longs: "fix output", markup: true}}
	return map[string][]shWriteRule{
		// file utilities
		"sort":       {{argOpts: "kotST", letters: "oT", longs: "output compress-program temporary-directory"}},
		"shuf":       {{argOpts: "ino", letters: "o", longs: "output"}},
		"uniq":       {{argOpts: "fsw", output: 2}},
		"iconv":      {{argOpts: "fto", letters: "o", longs: "output"}},
		"yq":         {{argOpts: "IopsFw", letters: "is", longs: "inplace in-place split-exp"}},
		"sd":         {{argOpts: "fn", operands: 3, unless: "-p --preview"}},
		"tidy":       {{words: "-m -modify -o -output -f -file -config", longs: "modify write-back output-file error-file"}},
		"xmllint":    {{words: "-o --output -output"}},
		"xmlstarlet": {{sub: "ed", letters: "L", longs: "inplace"}, {sub: "edit", letters: "L", longs: "inplace"}},
		"crudini":    {{longs: "set del merge"}},
		"openssl":    {{words: "-out -keyout"}},
		"gpg":        {{letters: "o", longs: "output decrypt-files encrypt-files"}},
		"pandoc":     {{letters: "o", longs: "output extract-media"}},
		"aws":        {{sub: "s3", always: true}},
		"gsutil":     {{sub: "cp", always: true}, {sub: "mv", always: true}, {sub: "rsync", always: true}, {sub: "rm", always: true}},
		"jsonlint":   inPlace, "yapf": inPlace, "autopep8": inPlace, "autoflake": inPlace, "docformatter": inPlace,
		"gofmt": gofmt, "goimports": gofmt, "gofumpt": gofmt, "golines": gofmt,
		"dos2unix": dos2unix, "unix2dos": dos2unix, "mac2unix": dos2unix, "unix2mac": dos2unix,
		// formatters and fixers
		"prettier":     {{letters: "w", longs: "write", markup: true}},
		"clang-format": {{words: "-i --i"}},
		"clang-tidy":   {{words: "-fix --fix -fix-errors --fix-errors", longs: "fix fix-errors export-fixes"}},
		"black":        {{always: true, unless: "--check --diff -c --code --version --help -h"}},
		"ruff":         {{sub: "format", always: true, unless: "--check --diff --help -h"}, {longs: "fix fix-only add-noqa"}},
		"isort":        {{always: true, unless: "--check-only -c --check --diff --stdout -d --show-config --show-files --version -V --help -h"}},
		"eslint":       lint, "stylelint": lint,
		"rubocop":            {{argOpts: "cfrsC", letters: "aAxo", longs: "autocorrect auto-correct autocorrect-all auto-correct-all fix-layout auto-gen-config out regenerate-todo"}},
		"shfmt":              {{argOpts: "i", letters: "w", longs: "write"}},
		"terraform":          {{sub: "fmt", always: true, unless: "-check --check -write=false --write=false -help --help"}},
		"tofu":               {{sub: "fmt", always: true, unless: "-check --check -write=false --write=false -help --help"}},
		"rustfmt":            {{always: true, unless: "--check --emit=stdout --version -V --help -h"}},
		"cargo":              {{sub: "fmt", always: true, unless: "--check --help -h"}, {sub: "fix", always: true}, {sub: "clippy", words: "--fix"}},
		"go":                 {{sub: "fmt", always: true}, {sub: "fix", always: true}},
		"perltidy":           {{always: true, unless: "-st --standard-output --version -v --help -h"}},
		"php-cs-fixer":       {{sub: "fix", always: true, unless: "--dry-run"}},
		"google-java-format": {{words: "-i -r --replace"}},
		"ktlint":             {{words: "-F --format"}},
		"stylua":             {{always: true, unless: "--check -c --help -h --version -V"}},
		"swiftformat":        {{always: true, unless: "--lint --dryrun --help --version"}},
		"taplo":              {{sub: "fmt", always: true, unless: "--check"}, {sub: "format", always: true, unless: "--check"}},
		"zig":                {{sub: "fmt", always: true, unless: "--check --stdin"}},
		"dart":               {{sub: "format", always: true, unless: "--output=none -onone --help -h"}},
		"mix":                {{sub: "format", always: true, unless: "--check-formatted --dry-run"}},
		"sqlfluff":           {{sub: "fix", always: true}, {sub: "format", always: true}},
		// Markdown and JSON
		"mdformat":          {{always: true, unless: "--check --version --help -h", markup: true}},
		"markdownlint":      markdownlint,
		"markdownlint-cli2": markdownlint,
		"remark":            {{letters: "o", longs: "output", markup: true}},
		"dprint":            {{sub: "fmt", always: true, unless: "--diff --help -h", markup: true, cwd: true}},
		"biome":             {biome("format"), biome("check"), biome("lint"), biome("ci")},
		"deno":              {{sub: "fmt", always: true, unless: "--check", markup: true, cwd: true}},
	}
})

// writes reads args by the rule; ops, when not nil, gets the operands (the
// paths a formatter is given).
func (r *shWriteRule) writes(args []shWord, ops *[]shWord) bool {
	if r.sub != "" {
		i := 0
		for i < len(args) && args[i].text != r.sub && args[i].text != "--" {
			i++
		}
		if i == len(args) || args[i].text == "--" {
			return false
		}
		args = args[i+1:]
	}
	hit, n, options := r.always, 0, true
	for j := 0; j < len(args); j++ {
		t := args[j].text
		switch {
		case !options || t == "-" || len(t) < 2 || t[0] != '-':
			n++
			hit = hit || n == r.output && t != "-"
			if ops != nil {
				*ops = append(*ops, args[j])
			}
		case t == "--":
			options = false
		case shListHas(r.unless, t):
			return false
		case shListHas(r.words, t):
			hit = true
		case t[1] == '-':
			name, _, _ := strings.Cut(t[2:], "=")
			hit = hit || name != "" && shPrefixOf(r.longs, name)
		default:
			for i := 1; i < len(t); i++ {
				if strings.IndexByte(r.letters, t[i]) >= 0 {
					hit = true
					break
				}
				if strings.IndexByte(r.argOpts, t[i]) >= 0 {
					if i+1 == len(t) {
						j++
					}
					break
				}
			}
		}
	}
	return hit || r.operands > 0 && n >= r.operands
}

// shToolName is a command name without a package runner's version
// (npx prettier@3).
func shToolName(name string) string {
	if i := strings.IndexByte(name, '@'); i > 0 {
		return name[:i]
	}
	return name
}

// shPrefixOf: name is a prefix of one of a space-separated list.
func shPrefixOf(list, name string) bool {
	for list != "" {
		var e string
		e, list, _ = strings.Cut(list, " ")
		if strings.HasPrefix(e, name) {
			return true
		}
	}
	return false
}

// shXxdWrites: xxd's second operand is its output file ("-" is stdout);
// -c, -g, -l, -o, -s, -n, -R and their long spellings (-cols, -len, ...)
// take the next word unless glued (-c8).
func shXxdWrites(args []shWord) bool {
	n, options := 0, true
	for j := 0; j < len(args); j++ {
		t := args[j].text
		switch {
		case options && t == "--":
			options = false
		case options && len(t) > 1 && t[0] == '-':
			if len(t) == 2 && strings.IndexByte("cglosnR", t[1]) >= 0 || shListHas("-cols -groupsize -len -offset -seek -name", t) {
				j++
			}
		default:
			n++
			if n == 2 && t != "-" {
				return true
			}
		}
	}
	return false
}

// shRunsOverFiles: fd -x/-X runs a command on each file found, rg --pre a
// program on each file searched.
func shRunsOverFiles(name string, args []shWord) bool {
	if name == "rg" {
		return shHasArg(args, "--pre", "--pre=")
	}
	for _, a := range args {
		if shFdExec(a.text) {
			return true
		}
	}
	return false
}

// computedOption: an argument computed on this command line may spell an
// option (X=-i; sed $X ..., sed $(echo -i) ..., set -- -i; sed "$@" ...):
// it starts with an expansion the command line controls.
func (sc *shScan) computedOption(args []shWord) bool {
	for _, a := range args {
		if a.dynamic && len(a.text) > 1 && a.text[0] == '$' && sc.controls(a.text) {
			return true
		}
	}
	return false
}

// computedCode: code arguments (sed's script, awk's program) hold an
// expansion the command line controls: sed "s/x/$Y/" may write a file.
func (sc *shScan) computedCode(args []shWord) bool {
	for _, a := range args {
		for t := a.text; a.dynamic; {
			i := strings.IndexByte(t, '$')
			if i < 0 {
				break
			}
			if sc.controls(t[i:]) {
				return true
			}
			t = t[i+1:]
		}
	}
	return false
}

// controls: the expansion text starts with has a value this command line
// may choose: a substitution, a positional or special parameter, an
// operator (${X:--i}), or a variable when the command line assigns any
// (setsEnvironment). A plain $NAME or ${NAME} is otherwise the
// environment's, which the session started with.
func (sc *shScan) controls(text string) bool {
	if len(text) < 2 {
		return false
	}
	switch c := text[1]; {
	case c == '{':
		end := strings.IndexByte(text, '}')
		if end < 3 || !shNameStart(text[2]) {
			return true
		}
		for i := 3; i < end; i++ {
			if !shNameChar(text[i]) {
				return true
			}
		}
	case !shNameStart(c):
		return true // $( $(( $1 $@ $* $# $? $$ $! $-
	}
	return sc.setsEnvironment()
}

// wrapperWrites: a wrapper that writes a file of its own before running
// the command: time -o FILE, strace/ltrace -o FILE, flock FILE (created),
// sudo -e (sudoedit).
func (c *shCmd) wrapperWrites() bool {
	k := c.head()
	for k >= 0 && k < len(c.words) {
		name := c.name(k)
		wr, ok := shWrappers()[name]
		if !ok || !c.words[k].literal() {
			return false
		}
		var repl string
		output := false // -o FILE in any spelling: -fo F, --out=F
		next, _ := c.skipWrapper(k+1, &wr, name == "xargs", &repl, func(o shOpt, _ int) {
			output = output || o.letter == 'o'
		})
		if next < 0 {
			return false
		}
		opts := c.words[k+1 : min(next, len(c.words))]
		switch name {
		case "time", "strace", "ltrace":
			if output {
				return true
			}
			for _, o := range opts {
				if o.text == "--output" || strings.HasPrefix(o.text, "--output=") || len(o.text) > 1 && o.text[0] == '-' && o.text[1] != '-' && strings.IndexByte(o.text, 'o') > 0 {
					return true
				}
			}
		case "flock":
			return true
		case "sudo":
			if shHasOption(opts, 'e') || shHasLong(opts, "edit", 1) {
				return true
			}
		}
		k = next
	}
	return false
}

// shHasArg: an argument equal to one of opts (those ending in '=' match as
// a prefix).
func shHasArg(args []shWord, opts ...string) bool {
	for _, a := range args {
		for _, o := range opts {
			if a.text == o || strings.HasSuffix(o, "=") && strings.HasPrefix(a.text, o) {
				return true
			}
		}
	}
	return false
}

// shHasLong: a long option (--name or --name=value) spelled as at least
// min characters of name, as getopt_long takes a prefix.
func shHasLong(args []shWord, name string, min int) bool {
	for _, a := range args {
		if long, ok := strings.CutPrefix(a.text, "--"); ok {
			long, _, _ = strings.Cut(long, "=")
			if len(long) >= min && strings.HasPrefix(name, long) {
				return true
			}
		}
	}
	return false
}

// shHasOption: a short-option cluster (-p, -rp) holds the letter.
func shHasOption(args []shWord, letter byte) bool {
	for _, a := range args {
		t := a.text
		if len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.IndexByte(t[1:], letter) >= 0 {
			return true
		}
	}
	return false
}

func shOnlyVersion(args []shWord) bool {
	for _, a := range args {
		switch a.text {
		case "--version", "-v", "-V", "--help", "-h":
		default:
			return false
		}
	}
	return len(args) > 0
}

// shSedScriptRE finds sed's w/W (write a file) and e (run a command).
var shSedScriptRE = LazyRegexp(`(^|[^a-zA-Z]|/[gpIiMm0-9]+)[wWe](\s|;|\}|$)`)

func shSedWrites(args []shWord) bool {
	scripted := false
	for j := 0; j < len(args); j++ {
		t := args[j].text
		var script string
		switch {
		case strings.HasPrefix(t, "--in-place"):
			return true
		case t == "--expression" && j+1 < len(args):
			j++
			script, scripted = args[j].text, true
		case strings.HasPrefix(t, "--expression="):
			script, scripted = t[len("--expression="):], true
		case strings.HasPrefix(t, "--") || t == "-":
		case len(t) > 1 && t[0] == '-':
			s, inPlace, used := shSedOption(args, j)
			if inPlace {
				return true
			}
			j += used
			if s != nil {
				script, scripted = *s, true
			}
		case !scripted:
			script, scripted = t, true
		}
		if shSedScriptRE.MatchString(script) {
			return true
		}
	}
	return false
}

// shSedOption reads a short-option cluster: -i (in place), -e script,
// -f/-l with an argument.
func shSedOption(args []shWord, j int) (script *string, inPlace bool, used int) {
	t := args[j].text
	for i := 1; i < len(t); i++ {
		switch t[i] {
		case 'i':
			return nil, true, 0
		case 'e', 'f', 'l':
			arg := t[i+1:]
			if arg == "" && j+1 < len(args) {
				arg, used = args[j+1].text, 1
			}
			if t[i] == 'e' {
				return &arg, false, used
			}
			return nil, false, used
		}
	}
	return nil, false, 0
}

func shCurlWrites(args []shWord) bool {
	if shHasArg(args, "--output", "--output=", "--remote-name", "--remote-name-all", "--output-dir", "--cookie-jar", "--dump-header") {
		return true
	}
	for _, a := range args {
		t := a.text
		if len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsAny(t[1:], "oOcD") {
			return true
		}
	}
	return false
}

// shAwkWrites: awk's program prints to a file or a command, or runs one;
// gawk's inplace extension (-i inplace, -iinplace, --include=inplace,
// @include "inplace"); gawk's -o[FILE], -d[FILE], -p[FILE] (and -W
// pretty-print=, dump-variables=, profile=) write a file.
func shAwkWrites(args []shWord) bool {
	for j, a := range args {
		t := a.text
		if strings.ContainsAny(t, ">|") || strings.Contains(t, "system") || strings.Contains(t, "inplace") {
			return true
		}
		if len(t) < 2 || t[0] != '-' && (j == 0 || args[j-1].text != "-W") {
			continue
		}
		if long, _, _ := strings.Cut(strings.TrimLeft(t, "-W"), "="); len(long) > 1 && shPrefixOf("pretty-print dump-variables profile", long) {
			return true
		}
		if t[0] == '-' && t[1] != '-' {
			for i := 1; i < len(t); i++ {
				if strings.IndexByte("odp", t[i]) >= 0 {
					return true
				}
				if strings.IndexByte("fvFiElWe", t[i]) >= 0 {
					break
				}
			}
		}
	}
	return false
}

// shGitReads: a git command that only reads: plain `git`, then only
// harmless global options (-C DIR with DIR literal, which bases follows),
// a read-only subcommand, and literal arguments without an option that
// writes a file (--output; -o) or runs a program (--ext-diff, --textconv,
// --filters, grep's -O), nor -c or --config-env anywhere (a configuration
// may name a program: diff.external, core.pager). What git reads from its
// environment (GIT_EXTERNAL_DIFF, GIT_PAGER) is the caller's to rule out:
// setsEnvironment.
func shGitReads(command shWord, args []shWord) bool {
	if !shGitCommand(command.text) {
		return false
	}
	sub := -1
	for j := 0; j < len(args) && sub < 0; j++ {
		t := args[j].text
		switch {
		case !args[j].literal():
			return false
		case t == "-C" && j+1 < len(args) && args[j+1].literal():
			j++
		case shGitHarmlessGlobals()[t]:
		case shGitReadOnly()[t]:
			sub = j
		default:
			return false // --git-dir, --exec-path, -c, an alias, a subcommand that writes
		}
	}
	if sub < 0 {
		return false
	}
	options := true // before --: a glob might expand to a file named like an option
	for _, a := range args[sub+1:] {
		t := a.text
		switch {
		case a.dynamic:
			return false
		case t == "--":
			options = false
		case a.glob && options && strings.IndexByte("*?[", a.pattern[0]) >= 0:
			return false
		case shGitOptionWrites(args[sub].text, t):
			return false
		}
	}
	return true
}

// shGitCommand: git by name, or from a system directory (./git is a
// script).
func shGitCommand(text string) bool {
	switch strings.TrimSuffix(strings.ToLower(text), ".exe") {
	case "git", "/usr/bin/git", "/usr/local/bin/git", "/bin/git", "/opt/homebrew/bin/git":
		return true
	}
	return false
}

// shGitHarmlessGlobals are git's options before the subcommand that
// change neither what it runs nor where it reads.
var shGitHarmlessGlobals = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"--no-pager": true, "-P": true, "-p": true, "--paginate": true, "--no-optional-locks": true,
		"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true,
		"--icase-pathspecs": true, "--no-replace-objects": true, "--no-lazy-fetch": true, "--no-advice": true,
	}
})

// shGitReadOnly are the subcommands that write no file outside .git:
// diff, log, show, status and the other readers; branch, tag and remote
// list, or change refs and .git/config (their deleting, renaming and
// adding forms count as writes all the same: shGitOptionWrites).
var shGitReadOnly = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"diff": true, "log": true, "show": true, "status": true, "blame": true, "grep": true,
		"ls-files": true, "ls-tree": true, "rev-parse": true, "describe": true, "shortlog": true,
		"cat-file": true, "branch": true, "tag": true, "remote": true,
	}
})

// shGitRunsOrWrites are the long options that write a file or run a
// program configured elsewhere. Git takes an unambiguous prefix of a long
// option (--out for --output), so a prefix counts too.
var shGitRunsOrWrites = []string{"output", "ext-diff", "textconv", "filters", "open-files-in-pager", "config-env"}

// shGitOptionWrites: an argument of git subcommand sub that makes it write
// a file or run a program.
func shGitOptionWrites(sub, t string) bool {
	if t == "-c" || len(t) > 2 && t[0] == '-' && t[1] == 'c' {
		return true // -c is a configuration anywhere it may be read as one
	}
	if long, ok := strings.CutPrefix(t, "--"); ok && long != "" && !strings.HasPrefix(long, "no-") {
		long, _, _ = strings.Cut(long, "=")
		if long != "text" && long != "filter" { // options of their own, not prefixes of textconv, filters
			for _, o := range shGitRunsOrWrites {
				if strings.HasPrefix(o, long) || strings.HasPrefix(long, o) {
					return true
				}
			}
		}
	}
	switch sub {
	case "diff", "log", "show":
		return strings.HasPrefix(t, "-o") // no such option: refused as --output's look-alike
	case "grep":
		return shHasOption([]shWord{{text: t}}, 'O') // -O[pager]: opens the matches in a program
	case "branch", "tag", "remote":
		switch t {
		case "-D", "-d", "-m", "-M", "-C", "--delete", "add", "rm", "set-url", "--edit-description":
			return true // branch -D, tag -d, remote add, ...
		}
	}
	return false
}

// setsEnvironment: the command line may set a variable a program it runs
// reads (git: GIT_EXTERNAL_DIFF, GIT_PAGER, GIT_CONFIG_*): an assignment
// anywhere (X=1 git, env X=1 git, export X=1), a builtin that assigns
// (read, printf -v, ...), a for loop's variable, or ${X:=...}.
func (sc *shScan) setsEnvironment() bool {
	if sc.envSet == 0 {
		sc.envSet = 1
		if sc.assignsAny() {
			sc.envSet = 2
		}
	}
	return sc.envSet == 2
}

// shAssigners are builtins that set variables.
var shAssigners = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"export": true, "declare": true, "typeset": true, "local": true, "readonly": true, "read": true,
		"mapfile": true, "readarray": true, "getopts": true, "let": true, "source": true, ".": true,
	}
})

func (sc *shScan) assignsAny() bool {
	for _, c := range sc.cmds {
		for _, w := range c.words {
			if shIsAssignment(w.text) || w.dynamic && strings.Contains(w.text, "${") && strings.Contains(w.text, "=") {
				return true
			}
		}
		for _, f := range c.feeds {
			if f.dynamic && strings.Contains(f.text, "${") && strings.Contains(f.text, "=") {
				return true
			}
		}
		if k := c.firstUnreserved(); k < len(c.words) && (c.words[k].text == "for" || c.words[k].text == "select") {
			return true
		}
		if t := c.effective(); t.k >= 0 {
			name := c.name(t.k)
			if shAssigners()[name] || name == "printf" && shHasOption(c.words[t.k+1:], 'v') {
				return true
			}
		}
	}
	return false
}

// ---- SweepsProject ----

// SweepsProject reports whether a Bash command changes files across the
// whole project tree without naming .orchestrator, and so reaches it:
// `git clean` of ignored files (-x, -X; orch-hook's state is git-ignored),
// `find` from the project root (or above it) with -delete or -exec, `fd`
// with -x/-X and `rg --pre` from it (they run a command on every file),
// `rsync --delete` into the project root, and a formatter of Markdown or
// JSON (prettier, mdformat, ...: shWriteRules' markup) told to write over
// it; the same with those options computed or from xargs. Formatters of
// other languages (gofmt -w ., black .) change no file under .orchestrator
// and do not count. cwdRel is the shell's directory relative to the root
// ("" at the root). A command that names .orchestrator (as an exclusion,
// say) is judged by MentionsPath instead.
func SweepsProject(cmd, cwdRel string) bool { return shellScan(cmd).sweepsProject(cwdRel) }

func (sc *shScan) sweepsProject(cwdRel string) bool {
	if sc.suspicious {
		return false // ChangesFiles and MentionsPath already say so
	}
	atRoot := func(w shWord) bool {
		if w.dynamic {
			return true // $PWD, $(pwd), "$root": may be the root
		}
		p := strings.TrimSuffix(w.text, "/")
		switch {
		case p == "/":
			return true
		case strings.HasPrefix(p, "/"):
			return false // an absolute path: judged as a path (the root's own is a known limit)
		case p == "~+" || strings.HasPrefix(p, "~+/"):
			p = "." + p[2:] // bash's $PWD
		}
		// "src/..", "./.", "..": where it lands from the session's
		// directory; at or above the root, it holds .orchestrator.
		at := path.Clean(path.Join(cwdRel, p))
		return at == "." || at == ".." || strings.HasPrefix(at, "../")
	}
	for _, c := range sc.cmds {
		t := c.effective()
		if t.k < 0 {
			continue
		}
		name, args := c.name(t.k), c.words[t.k+1:]
		// Options from stdin (xargs) or computed on this command line may
		// be the sweeping ones (X=-delete; find . $X).
		computed := t.xargs || sc.computedOption(args)
		switch name {
		case "git":
			if shGitCleansIgnored(args) || computed && shGitMayClean(args) {
				return true
			}
		case "find":
			if t.xargs {
				return true // its start points come from stdin too
			}
			if !computed && !shHasArg(args, "-delete", "-exec", "-execdir", "-ok", "-okdir") {
				continue
			}
			starts := 0
			for j := 0; j < len(args); j++ {
				a := args[j]
				switch {
				case j == starts && (a.text == "-L" || a.text == "-H" || a.text == "-P" || strings.HasPrefix(a.text, "-O")):
					starts++ // find's own options come before the start points
					continue
				case j == starts && a.text == "-D" && j+1 < len(args):
					starts += 2
					j++
					continue
				}
				if strings.HasPrefix(a.text, "-") || a.text == "(" || a.text == "!" {
					if j == starts && atRoot(shWord{text: "."}) {
						return true // no start point: find starts at "."
					}
					break // the expression starts: no more start points
				}
				if atRoot(a) {
					return true
				}
			}
		case "rsync":
			if len(args) > 0 && (computed || shHasArg(args, "--delete", "--delete-before", "--delete-after", "--delete-during", "--delete-excluded", "--del")) && (t.xargs || atRoot(args[len(args)-1])) {
				return true
			}
		case "fd", "fdfind", "rg":
			// A command run on every file found, from the current
			// directory unless a path is given.
			if !computed && !shRunsOverFiles(name, args) {
				continue
			}
			if cwdRel == "" || t.xargs {
				return true
			}
			for _, a := range args {
				if atRoot(a) {
					return true
				}
			}
		default:
			for _, r := range shWriteRules()[shToolName(name)] {
				var ops []shWord
				if !r.markup || !computed && !r.writes(args, &ops) {
					continue
				}
				if computed || r.cwd && len(ops) == 0 && cwdRel == "" {
					return true
				}
				for _, o := range ops {
					if atRoot(o) || shTreePattern(o.text) {
						return true
					}
				}
			}
		}
	}
	return false
}

// shTreePattern: a pattern a formatter expands itself (prettier
// '**/*.md'), matching dot directories as such tools do, from its first
// component: "**/*.md", "*/tasks/*.md".
func shTreePattern(p string) bool {
	p = strings.TrimPrefix(p, "./")
	first, rest, nested := strings.Cut(p, "/")
	if !strings.ContainsAny(first, "*?[{") {
		return false // "src/**/*.ts" stays under src
	}
	if !nested && first != "**" {
		return false
	}
	// The last component must be able to match what orch-hook keeps
	// (Markdown, JSON): "**/*.ts" cannot.
	last := p[strings.LastIndexByte(p, '/')+1:]
	return rest == "" || first == "**" && !strings.ContainsAny(last, ".") || shPatternMayMatch(last, "x.md", "x.json", "x.jsonl", "MASTER_PLAN.md", "checkpoint.json", "events.jsonl")
}

// shPatternMayMatch: the glob (braces expanded) matches one of the names.
func shPatternMayMatch(glob string, names ...string) bool {
	for _, g := range shExpandBraces(glob) {
		for _, n := range names {
			if ok, err := path.Match(g, n); ok && err == nil || strings.ContainsAny(g, "[") {
				return true
			}
		}
	}
	return false
}

// shExpandBraces expands one level of {a,b} in a glob.
func shExpandBraces(g string) []string {
	open := strings.IndexByte(g, '{')
	closeAt := strings.IndexByte(g, '}')
	if open < 0 || closeAt < open {
		return []string{g}
	}
	var out []string
	for _, alt := range strings.Split(g[open+1:closeAt], ",") {
		out = append(out, shExpandBraces(g[:open]+alt+g[closeAt+1:])...)
	}
	return out
}

// shGitMayClean: git's subcommand may be clean or stash: it is, it is
// computed, or there is none (it may come from stdin).
func shGitMayClean(args []shWord) bool {
	for j := 0; j < len(args); j++ {
		t := args[j].text
		switch {
		case t == "-C" || t == "-c":
			j++
		case args[j].dynamic || t == "clean" || t == "stash":
			return true
		case !strings.HasPrefix(t, "-"):
			return false
		}
	}
	return true
}

// shGitCleansIgnored: `git clean` with -x or -X, or `git stash [push|save]`
// with -a or --all (in any option cluster): they remove git-ignored files,
// which orch-hook's state is.
func shGitCleansIgnored(args []shWord) bool {
	sub, stashArgs := "", false
	cleans, narrowed := false, false // git clean -d, and a pathspec under a directory
	for j := 0; j < len(args); j++ {
		t := args[j].text
		option := strings.HasPrefix(t, "-")
		short := option && !strings.HasPrefix(t, "--")
		switch {
		case sub == "" && (t == "-C" || t == "-c"):
			j++
		case sub == "" && (t == "clean" || t == "stash"):
			sub = t
		case sub == "" && !option:
			return false // another git command
		case sub == "clean" && short && strings.ContainsAny(t, "xX"):
			return true // ignored files: the state
		case sub == "clean" && short && strings.ContainsAny(t, "d"):
			// -d removes untracked directories: the plan is one unless the
			// project commits it; a pathspec under a directory narrows it.
			cleans = true
		case sub == "clean" && (t == "-e" || t == "--exclude"):
			j++
		case sub == "clean" && !option:
			p := path.Clean(strings.TrimPrefix(args[j].text, "./"))
			narrowed = narrowed || !args[j].dynamic && p != "." && p != ".." && !strings.HasPrefix(p, "../") && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, ":") && !strings.ContainsAny(p[:1], "*?[")
		case sub != "stash":
		case !stashArgs && !option && t != "push" && t != "save":
			return false // stash list, show, apply, ...
		case short && strings.ContainsAny(t, "au") || len(t) > 2 && (strings.HasPrefix("--all", t) || strings.HasPrefix("--include-untracked", t)):
			return true // -u/-a take untracked (the plan) and ignored files away
		default:
			stashArgs = true // push's options and paths, or a message
		}
	}
	return cleans && !narrowed
}
