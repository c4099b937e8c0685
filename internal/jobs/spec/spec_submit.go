package spec

import (
	"fmt"
	"strings"
)

// HTCondor submit files, the subset sitebox can honour. Keys are
// case-insensitive; a line whose first non-blank is '#' is a comment (as
// in HTCondor, '#' later in a line is part of the value); a trailing
// backslash joins the next line with nothing between. Unlike
// condor_submit, setting a key twice between two queue statements is an
// error rather than a silent override (setting it again after a queue
// statement is how several queue statements differ), and a key sitebox
// does not know is an error unless the file uses it as a
// macro, $(name) — HTCondor takes any unknown key as a macro, which would
// hide typos such as "request_cpu".

// submitMacroBudget bounds how much text macro expansion may produce for
// one statement, so nested macros cannot blow up (a = $(b)$(b)...).
const submitMacroBudget = 64 << 10

// submitStmt is one "key = value" statement.
type submitStmt struct {
	line int
	key  string // as written, for messages
	name string // lower case; HTCondor's "MY.x" is written "+x"
	val  string
}

type submitParser struct {
	ps        *specProblems
	known     func(string) bool
	defs      map[string]string     // macro name → raw value
	used      map[string]bool       // names the file uses as $(name)
	either    map[string]submitStmt // of two keys meaning the same, the one set
	spec      Spec
	queue     int // procs per item
	queueLine int
	// itemVars name the columns of items, the rows of a "queue … in",
	// "from" or "matching" (nil: plain "queue N").
	itemVars []string
	items    [][]string
	// vars are one proc's item values, Step and Row, when the file is
	// read for that proc.
	vars    map[string]string
	sawExec bool
	// sites maps a grid site name to the domains serving it.
	sites  func(string) []string
	target Target
	// getenv is the getenv statement's value ("" none), initialDir the
	// initialdir's, requirements and rank the parsed expressions: all
	// applied once the whole block is read (finish).
	getenv       string
	initialDir   string
	requirements *submitExpr
	rank         *submitExpr
	container    string
	containerSt  submitStmt
	// containerUniverse is a universe = docker or container statement.
	containerUniverse submitStmt
}

func parseSubmitFile(data []byte, t Target, ps *specProblems) specDraft {
	var out specDraft
	var merged []submitStmt
	blocks := submitBlocks(data, ps)
	// A macro set before one queue statement may be used only after a
	// later one: what counts as used is the whole file's.
	stmts := make([][]submitStmt, len(blocks))
	used := map[string]bool{}
	for i, b := range blocks {
		stmts[i] = newSubmitParser(t, ps, nil).statements(b.lines)
		for k := range b.used {
			used[k] = true
		}
		for _, st := range stmts[i] {
			markUsed(st.val, used)
		}
	}
	for i, b := range blocks {
		p := newSubmitParser(t, ps, nil)
		p.used = used
		merged = mergeStmts(merged, stmts[i])
		d := p.block(merged, b)
		if d.specs == nil {
			for range d.queue {
				d.specs = append(d.specs, d.spec)
			}
		}
		out.spec = d.spec
		out.specs = append(out.specs, d.specs...)
		out.vars = append(out.vars, d.vars...)
		out.queue += d.queue
	}
	if msg := checkQueueCount(int64(out.queue)); msg != "" && len(ps.list) == 0 {
		ps.add(0, "queue", "the queue statements make %d jobs: %s", out.queue, msg)
	}
	return out
}

// block reads the statements in force at one queue statement and
// queues its procs.
func (p *submitParser) block(stmts []submitStmt, b submitBlock) specDraft {
	p.queueLine = b.queueLine
	if b.queueLine > 0 {
		p.queue = p.parseQueue(b.queueLine, b.queueRest)
	}
	p.run(stmts)
	if p.itemVars == nil || len(p.ps.list) > 0 {
		return p.draft()
	}
	// Items: the statements are read again for each proc with its row's
	// values as macros, so they are substituted before arguments and
	// environment are split, as HTCondor does.
	d := p.draft()
	d.specs = make([]Spec, len(d.vars))
	for i, vars := range d.vars {
		q := newSubmitParser(p.target, &specProblems{}, vars)
		q.queueLine, q.itemVars, q.used = p.queueLine, p.itemVars, p.used
		q.run(stmts)
		if len(q.ps.list) > 0 && len(p.ps.list) == 0 {
			for _, pr := range q.ps.list {
				p.ps.add(pr.Line, pr.Key, "proc %d: %s", i, pr.Msg)
			}
		}
		d.specs[i] = q.spec
	}
	return d
}

func newSubmitParser(t Target, ps *specProblems, vars map[string]string) *submitParser {
	if t.Known == nil {
		t.Known = func(string) bool { return true }
	}
	return &submitParser{ps: ps, target: t, known: t.Known, sites: t.Sites, defs: map[string]string{},
		used: map[string]bool{}, either: map[string]submitStmt{}, vars: vars}
}

func (p *submitParser) run(stmts []submitStmt) {
	for _, st := range stmts {
		if !strings.HasPrefix(st.name, "+") {
			p.defs[st.name] = st.val
		}
		markUsed(st.val, p.used)
	}
	for _, st := range stmts {
		if v, ok := p.expand(st); ok {
			p.apply(st, v)
		}
	}
	if p.queueLine == 0 {
		p.ps.add(0, "queue", `no queue statement: a submit file ends with "queue" or "queue N" (a TOML job file needs a [job] table)`)
		p.queue = 1
	}
	if p.spec.Executable == "" && !p.sawExec {
		p.ps.add(p.queueLine, "executable", "missing: every job needs one")
	}
	p.finish()
}

// markUsed notes the macros value uses: $(name), and the name given to
// $INT(name), $REAL(name) and the like.
func markUsed(value string, used map[string]bool) {
	mapMacros(value, func(n string) string { used[strings.ToLower(n)] = true; return "" })
	for _, m := range macroFunc.FindAllStringSubmatch(value, -1) {
		arg, _, _ := strings.Cut(m[2], ",")
		used[strings.ToLower(strings.TrimSpace(arg))] = true
	}
}

// statements reads one block's lines as key = value statements,
// reporting malformed lines and keys set twice within it.
func (p *submitParser) statements(lines []submitLine) []submitStmt {
	var out []submitStmt
	seen := map[string]int{}
	for _, l := range lines {
		key, val, ok := strings.Cut(l.text, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			p.ps.add(l.line, "", "malformed line %q: expected key = value", clipText(l.text))
			continue
		}
		name := strings.ToLower(key)
		if rest, ok := strings.CutPrefix(name, "my."); ok {
			name = "+" + rest
		}
		if first, dup := seen[name]; dup {
			p.ps.add(l.line, key, "duplicate key (first set on line %d); a key may be set again only after a queue statement", first)
			continue
		}
		seen[name] = l.line
		out = append(out, submitStmt{line: l.line, key: key, name: name, val: strings.TrimSpace(val)})
	}
	return out
}

// submitLine is a statement's text and the line it starts on.
type submitLine struct {
	line int
	text string
}

// joinSubmitLines drops blank and comment lines and joins continuations.
func joinSubmitLines(data []byte) []submitLine {
	var out []submitLine
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(raw)
		if start == 0 {
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			start = i + 1
		}
		if body, ok := strings.CutSuffix(t, `\`); ok {
			// As HTCondor: the backslash goes, nothing is put in its
			// place, and the next line's leading blanks go too.
			cur.WriteString(body)
			continue
		}
		cur.WriteString(t)
		out = append(out, submitLine{start, strings.TrimSpace(cur.String())})
		cur.Reset()
		start = 0
	}
	if start != 0 { // the last line ended with a backslash
		out = append(out, submitLine{start, strings.TrimSpace(cur.String())})
	}
	return out
}

// cutQueue recognises the queue statement and returns what follows it.
func cutQueue(text string) (string, bool) {
	word, rest := text, ""
	if i := strings.IndexAny(text, " \t"); i >= 0 {
		word, rest = text[:i], strings.TrimSpace(text[i:])
	}
	if !strings.EqualFold(word, "queue") || strings.HasPrefix(rest, "=") {
		return "", false
	}
	return rest, true
}

// expand substitutes the file's own macros, leaving the job macros
// ($(Process), $(Cluster)) for queue time.
func (p *submitParser) expand(st submitStmt) (string, bool) {
	budget, bad := submitMacroBudget, ""
	var walk func(s string, depth int) string
	walk = func(s string, depth int) string {
		return mapMacros(s, func(name string) string {
			def, ok := p.defs[strings.ToLower(name)]
			budget -= len(def) + 1
			switch {
			case bad != "":
			case p.vars != nil && hasKey(p.vars, strings.ToLower(name)):
				return p.vars[strings.ToLower(name)]
			case isJobMacro(name) || p.isItemVar(name):
				return "$(" + name + ")"
			case !ok:
				bad = fmt.Sprintf("unknown macro $(%s)", name)
			case depth >= 16:
				bad = fmt.Sprintf("macro $(%s) nests too deep (does it refer to itself?)", name)
			case budget < 0:
				bad = fmt.Sprintf("macros expand to more than %d bytes", submitMacroBudget)
			default:
				return walk(def, depth+1)
			}
			return ""
		})
	}
	v := walk(st.val, 0)
	if bad == "" {
		v, bad = expandFuncs(v, p.defs)
	}
	if bad != "" {
		p.ps.add(st.line, st.key, "%s", bad)
		return "", false
	}
	return v, true
}
