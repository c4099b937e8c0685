package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// HTCondor submit files, the subset sitebox can honour. Keys are
// case-insensitive; a line whose first non-blank is '#' is a comment (as
// in HTCondor, '#' later in a line is part of the value); a trailing
// backslash joins the next line with one space. Unlike condor_submit,
// setting a key twice is an error rather than a silent override, and a
// key sitebox does not know is an error unless the file uses it as a
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
	sites func(string) []string
}

func parseSubmitFile(data []byte, known func(string) bool, sites func(string) []string, ps *specProblems) specDraft {
	p := newSubmitParser(known, ps, nil)
	p.sites = sites
	p.run(data)
	if p.itemVars == nil || len(ps.list) > 0 {
		return p.draft()
	}
	// Items: the file is read again for each proc with its row's values
	// as macros, so they are substituted before arguments and environment
	// are split, as HTCondor does.
	d := p.draft()
	d.specs = make([]Spec, len(d.vars))
	for i, vars := range d.vars {
		q := newSubmitParser(known, &specProblems{}, vars)
		q.sites = sites
		q.run(data)
		if len(q.ps.list) > 0 && len(ps.list) == 0 {
			for _, pr := range q.ps.list {
				ps.add(pr.Line, pr.Key, "proc %d: %s", i, pr.Msg)
			}
		}
		d.specs[i] = q.spec
	}
	return d
}

func newSubmitParser(known func(string) bool, ps *specProblems, vars map[string]string) *submitParser {
	return &submitParser{ps: ps, known: known, defs: map[string]string{},
		used: map[string]bool{}, either: map[string]submitStmt{}, vars: vars}
}

func (p *submitParser) run(data []byte) {
	stmts := p.statements(data)
	for _, st := range stmts {
		if !strings.HasPrefix(st.name, "+") {
			p.defs[st.name] = st.val
		}
		mapMacros(st.val, func(n string) string { p.used[strings.ToLower(n)] = true; return "" })
		// $INT(name) and $REAL(name) use a macro by name too.
		for _, m := range macroFunc.FindAllStringSubmatch(st.val, -1) {
			arg, _, _ := strings.Cut(m[2], ",")
			p.used[strings.ToLower(strings.TrimSpace(arg))] = true
		}
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
}

// statements splits the file into key = value statements, reporting
// malformed lines, duplicate keys and anything after the queue statement.
func (p *submitParser) statements(data []byte) []submitStmt {
	var out []submitStmt
	seen := map[string]int{}
	lines := joinSubmitLines(data)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		rest, isQueue := cutQueue(l.text)
		switch {
		case p.queueLine > 0 && isQueue:
			p.ps.add(l.line, "queue", "only one queue statement is supported (the first is on line %d)", p.queueLine)
			continue
		case p.queueLine > 0:
			p.ps.add(l.line, "", "nothing may follow the queue statement (line %d)", p.queueLine)
			continue
		case isQueue:
			// "queue x from (" takes the lines up to the one with ")".
			if strings.Contains(rest, "(") && !strings.Contains(rest, ")") {
				for i+1 < len(lines) && !strings.Contains(rest, ")") {
					i++
					rest += "\n" + lines[i].text
				}
			}
			p.queueLine = l.line
			p.queue = p.parseQueue(l.line, rest)
			continue
		}
		key, val, ok := strings.Cut(l.text, "=")
		key = strings.TrimSpace(key)
		if word := strings.ToLower(strings.Fields(l.text + " x")[0]); word == "include" || word == "if" || word == "elif" || word == "else" || word == "endif" {
			p.ps.add(l.line, word, "%q is not supported: sitebox reads one self-contained submit file without conditionals; write the statements it would choose out in full", clipText(l.text))
			continue
		}
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			p.ps.add(l.line, "", "malformed line %q: expected key = value", clipText(l.text))
			continue
		}
		name := strings.ToLower(key)
		if rest, ok := strings.CutPrefix(name, "my."); ok {
			name = "+" + rest
		}
		if first, dup := seen[name]; dup {
			p.ps.add(l.line, key, "duplicate key (first set on line %d)", first)
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

// apply interprets one statement whose macros are expanded. It is one
// flat switch, a case per submit key, longer than most functions so the
// whole vocabulary reads as one table.
func (p *submitParser) apply(st submitStmt, v string) {
	add := func(format string, args ...any) { p.ps.add(st.line, st.key, format, args...) }
	switch st.name {
	case "executable":
		p.sawExec = true
		if s, ok := p.plain(st, v); ok {
			p.spec.Executable = s
		}
	case "arguments":
		if args, msg := splitCondorArgs(v); msg != "" {
			add("%s", msg)
		} else {
			p.spec.Arguments = args
		}
	case "environment":
		env, msgs := parseCondorEnv(v)
		for _, m := range msgs {
			add("%s", m)
		}
		if len(msgs) == 0 {
			p.spec.Env = env
		}
	case "request_cpus":
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			add("%q is not a whole number", v)
		case n < 1:
			add("must be at least 1, not %d", n)
		default:
			p.spec.CPUs = n
		}
	case "request_memory":
		if mb, msg := sizeMB(v, "m", true); msg != "" {
			add("%s (a bare number is MB; e.g. 2048, 2GB, 512MB)", msg)
		} else {
			p.spec.MemoryMB = mb
		}
	case "request_disk":
		if mb, msg := sizeMB(v, "k", true); msg != "" {
			add("%s (a bare number is KiB, as in HTCondor; e.g. 4000000, 4GB)", msg)
		} else {
			p.spec.DiskMB = mb
		}
	case "transfer_input_files":
		if s, ok := p.plain(st, v); ok {
			for _, item := range splitCommaList(s) {
				if in, msg := classifyInput(item); msg != "" {
					add("%s", msg)
				} else {
					p.spec.Inputs = append(p.spec.Inputs, in)
				}
			}
		}
	case "transfer_output_files":
		if s, ok := p.plain(st, v); ok {
			for _, item := range splitCommaList(s) {
				if msg := SandboxPathProblem(item); msg != "" {
					add("%s", msg)
				} else {
					p.spec.Outputs = append(p.spec.Outputs, item)
				}
			}
		}
	case "transfer_output_remaps":
		q := strings.TrimSpace(v)
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			add("must be a quoted list: transfer_output_remaps = \"a.txt = b.txt; c = d\"")
		} else if m, msg := ParseRemaps(q[1 : len(q)-1]); msg != "" {
			add("%s", msg)
		} else {
			p.spec.OutputRemaps = m
		}
	case "output_destination":
		if s, ok := p.plain(st, v); ok {
			if msg := checkDestination(s); msg != "" {
				add("%s", msg)
			} else {
				p.spec.OutputDestination = s
			}
		}
	case "output", "error":
		if s, ok := p.plain(st, v); ok {
			if msg := SandboxPathProblem(s); msg != "" {
				add("%s", msg)
			} else if st.name == "output" {
				p.spec.Stdout = s
			} else {
				p.spec.Stderr = s
			}
		}
	case "universe":
		if !strings.EqualFold(v, "vanilla") {
			add("universe %q is not supported (only vanilla)", v)
		}
	case "log", "should_transfer_files", "when_to_transfer_output", "notification", "notify_user":
		// HTCondor bookkeeping with no meaning here: the box keeps its
		// own event record and always transfers files.
	case "+domains":
		p.domains(st, v)
	case "+desired_sites":
		p.desiredSites(st, v)
	case "+backfill":
		switch strings.ToLower(v) {
		case "true":
			p.spec.Backfill = true
		case "false":
		default:
			add("must be true or false, not %q", v)
		}
	case "+maxwalltime", "+walltime", "+maxruntime":
		p.wallTime(st, v)
	case "+jobflavour":
		p.jobFlavour(st, v)
	case "max_retries":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100 {
			add("%q is not a number of retries from 0 to 100", v)
		} else {
			p.spec.MaxRetries = n
		}
	default:
		if reason, ok := submitUnsupported[st.name]; ok {
			add("%s", reason)
		} else if !p.used[st.name] || strings.HasPrefix(st.name, "+") {
			add("%s", unknownMsg("key", st.key, submitKeys))
		} // else a macro the file uses as $(name)
	}
}

// plain checks a value HTCondor takes verbatim (a path, a list of
// files): present, and not in quotes, which HTCondor would keep as part
// of the name.
func (p *submitParser) plain(st submitStmt, v string) (string, bool) {
	switch {
	case v == "":
		p.ps.add(st.line, st.key, "has no value")
	case strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'"):
		p.ps.add(st.line, st.key, "quoted value: submit-file values are not quoted (for a TOML job file, put the keys under a [job] table)")
	default:
		return v, true
	}
	return "", false
}

// once reports whether st is the first of a group of keys that mean the
// same thing, complaining when it is not.
func (p *submitParser) once(st submitStmt, group string) bool {
	if first, ok := p.either[group]; ok {
		p.ps.add(st.line, st.key, "means the same as %s (line %d): set only one", first.key, first.line)
		return false
	}
	p.either[group] = st
	return true
}

func (p *submitParser) domains(st submitStmt, v string) {
	if !p.once(st, "domains") {
		return
	}
	s, msg := classAdString(v)
	if msg != "" {
		p.ps.add(st.line, st.key, "%s", msg)
		return
	}
	names := splitCommaList(s)
	msgs := checkDomains(names, p.known)
	for _, m := range msgs {
		p.ps.add(st.line, st.key, "%s", m)
	}
	if len(msgs) == 0 {
		p.spec.Domains = names
	}
}
