package spec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The structure of a submit file around its statements, resolved before
// they are read: include lines inlined, if/elif/else/endif chosen, and
// the statements cut into blocks each ended by a queue statement (as
// condor_submit: each queue statement queues jobs of everything set so
// far, a key set again after it overriding the earlier value).

const (
	submitMaxIncludeDepth = 8       // include within include within …
	submitMaxIncludeBytes = 1 << 20 // one included file
)

// submitVersion is the HTCondor version whose reading sitebox follows,
// for "if version >= x.y.z".
var submitVersion = [3]int{25, 0, 0}

// submitBlock is the statements up to one queue statement.
type submitBlock struct {
	lines     []submitLine
	queueLine int // 0: the file has no queue statement
	queueRest string
	// used are the macros conditions and include names use (shared by
	// all blocks), so defining one is not an unknown key.
	used map[string]bool
}

// condFrame is one open if: whether the branch being read is taken,
// whether an earlier branch was, and whether the enclosing one is.
type condFrame struct {
	line          int
	taking, taken bool
	outer, inElse bool
}

type preprocessor struct {
	ps     *specProblems
	defs   map[string]string // statements so far, raw, for conditions
	conds  []condFrame
	blocks []submitBlock
	cur    submitBlock
	used   map[string]bool
}

// submitBlocks resolves data into blocks; lines after the last queue
// statement are a problem, never silently dropped.
func submitBlocks(data []byte, ps *specProblems) []submitBlock {
	pp := &preprocessor{ps: ps, defs: map[string]string{}, used: map[string]bool{}}
	pp.lines(joinSubmitLines(data), 0, 0)
	for _, c := range pp.conds {
		ps.add(c.line, "if", "this if has no endif")
	}
	switch {
	case len(pp.blocks) == 0:
		pp.blocks = append(pp.blocks, pp.cur) // queueLine 0: reported by the parser
	case len(pp.cur.lines) > 0:
		last := pp.blocks[len(pp.blocks)-1].queueLine
		for _, l := range pp.cur.lines {
			ps.add(l.line, "", "nothing may follow the last queue statement (line %d): HTCondor would ignore it", last)
		}
	}
	for i := range pp.blocks {
		pp.blocks[i].used = pp.used
	}
	return pp.blocks
}

// lines reads ls; an included file's lines carry the line of its
// include statement (at), as problems are reported against the file
// given to sitebox submit.
func (pp *preprocessor) lines(ls []submitLine, depth, at int) {
	for i := 0; i < len(ls); i++ {
		l := ls[i]
		if at > 0 {
			l.line = at
		}
		word := strings.ToLower(strings.Fields(l.text + " x")[0])
		switch word {
		case "if", "elif", "else", "endif":
			pp.conditional(l, word)
			continue
		}
		if !pp.taking() {
			continue
		}
		if rest, ok := cutInclude(l.text); ok {
			pp.include(l.line, rest, depth)
			continue
		}
		if rest, isQueue := cutQueue(l.text); isQueue {
			// "queue x from (" takes the lines up to the one with ")".
			for strings.Contains(rest, "(") && !strings.Contains(rest, ")") && i+1 < len(ls) {
				i++
				rest += "\n" + ls[i].text
			}
			pp.cur.queueLine, pp.cur.queueRest = l.line, rest
			pp.blocks = append(pp.blocks, pp.cur)
			pp.cur = submitBlock{}
			continue
		}
		if k, v, ok := strings.Cut(l.text, "="); ok {
			pp.defs[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
		pp.cur.lines = append(pp.cur.lines, l)
	}
}

func (pp *preprocessor) taking() bool {
	return len(pp.conds) == 0 || pp.conds[len(pp.conds)-1].taking
}

// cutInclude recognises "include : file" (and its variants) and returns
// what follows "include".
func cutInclude(text string) (string, bool) {
	const word = "include"
	if len(text) <= len(word) || !strings.EqualFold(text[:len(word)], word) || !strings.ContainsRune(" \t:", rune(text[len(word)])) {
		return "", false
	}
	rest := strings.TrimSpace(text[len(word):])
	if strings.HasPrefix(rest, "=") {
		return "", false // a macro named include
	}
	return rest, true
}

// include inlines "include : FILE" and "include ifexist : FILE";
// "include command : CMD" is refused.
func (pp *preprocessor) include(line int, rest string, depth int) {
	mode, name, ok := strings.Cut(rest, ":")
	mode = strings.ToLower(strings.Join(strings.Fields(mode), " "))
	name = strings.TrimSpace(pp.expand(name))
	switch {
	case !ok || name == "":
		pp.ps.add(line, "include", `want "include : FILE"`)
		return
	case strings.HasPrefix(mode, "command"):
		pp.ps.add(line, "include", "include command is refused: it runs a program while the file is read — on `sitebox submit --dry-run` too — "+
			"so a submit file received from someone else would run their command as you, with your token and files; "+
			"run the command yourself, write its output to a file, and include that file")
		return
	case mode != "" && mode != "ifexist":
		pp.ps.add(line, "include", "include %q is not supported (include : FILE, or include ifexist : FILE)", mode)
		return
	case depth >= submitMaxIncludeDepth:
		pp.ps.add(line, "include", "includes nest deeper than %d (does a file include itself?)", submitMaxIncludeDepth)
		return
	}
	// Relative to where sitebox submit runs, as condor_submit reads it.
	fi, err := os.Stat(filepath.Clean(name))
	switch {
	case err != nil && mode == "ifexist":
		return
	case err != nil:
		pp.ps.add(line, "include", "%v", err)
		return
	case !fi.Mode().IsRegular():
		pp.ps.add(line, "include", "%s is not a regular file", name)
		return
	case fi.Size() > submitMaxIncludeBytes:
		pp.ps.add(line, "include", "%s is larger than %d bytes", name, submitMaxIncludeBytes)
		return
	}
	data, err := os.ReadFile(filepath.Clean(name))
	if err != nil {
		pp.ps.add(line, "include", "%v", err)
		return
	}
	pp.lines(joinSubmitLines(data), depth+1, line)
}

// conditional follows if/elif/else/endif.
func (pp *preprocessor) conditional(l submitLine, word string) {
	cond := strings.TrimSpace(l.text[len(word):])
	n := len(pp.conds)
	if word != "if" && n == 0 {
		pp.ps.add(l.line, word, "%s without an if", word)
		return
	}
	switch word {
	case "if":
		outer := pp.taking()
		v := outer && pp.condition(l.line, cond)
		pp.conds = append(pp.conds, condFrame{line: l.line, taking: v, taken: v, outer: outer})
	case "elif":
		f := &pp.conds[n-1]
		if f.inElse {
			pp.ps.add(l.line, word, "elif after else (line %d's if)", f.line)
		}
		f.taking = f.outer && !f.taken && pp.condition(l.line, cond)
		f.taken = f.taken || f.taking
	case "else":
		f := &pp.conds[n-1]
		if f.inElse {
			pp.ps.add(l.line, word, "a second else (line %d's if)", f.line)
		}
		f.inElse, f.taking = true, f.outer && !f.taken
		f.taken = true
	case "endif":
		pp.conds = pp.conds[:n-1]
	}
}

// condition evaluates HTCondor's simple conditions: [!] defined NAME,
// version OP x.y.z, [!] a boolean (true, false, yes, no, a number), after
// macro substitution. Anything else is what HTCondor calls a complex
// conditional, which its submit parser refuses too.
func (pp *preprocessor) condition(line int, cond string) bool {
	c := strings.TrimSpace(pp.expand(cond))
	not := false
	if rest, ok := strings.CutPrefix(c, "!"); ok {
		not, c = true, strings.TrimSpace(rest)
	}
	f := strings.Fields(c)
	switch {
	case len(f) == 2 && strings.EqualFold(f[0], "defined"):
		_, ok := pp.defs[strings.ToLower(f[1])]
		pp.used[strings.ToLower(f[1])] = true
		return ok != not
	case len(f) >= 1 && strings.EqualFold(f[0], "version") && !not:
		v, ok := versionCondition(strings.TrimSpace(c[len("version"):]))
		if ok {
			return v
		}
	case len(f) == 1:
		switch strings.ToLower(f[0]) {
		case "true", "yes":
			return !not
		case "false", "no":
			return not
		}
		if n, err := strconv.ParseFloat(f[0], 64); err == nil {
			return (n != 0) != not
		}
	}
	pp.ps.add(line, "if", "%q is not a condition HTCondor's submit parser evaluates: use defined NAME, version >= x.y.z, or true/false/yes/no/a number "+
		"(comparisons of values are 'complex conditionals', which HTCondor refuses too)", clipText(cond))
	return false
}

// versionCondition evaluates "OP x.y.z" against submitVersion.
func versionCondition(s string) (bool, bool) {
	op := ""
	for _, o := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if rest, ok := strings.CutPrefix(s, o); ok {
			op, s = o, strings.TrimSpace(rest)
			break
		}
	}
	parts := strings.Split(s, ".")
	if op == "" || len(parts) > 3 {
		return false, false
	}
	cmp := 0
	for i := 0; i < 3 && cmp == 0; i++ {
		n := 0
		if i < len(parts) {
			var err error
			if n, err = strconv.Atoi(parts[i]); err != nil {
				return false, false
			}
		}
		cmp = compareInt(submitVersion[i], n)
	}
	return compare(op, float64(cmp), 0).b, true
}

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// expand substitutes the macros set so far into s (unknown ones are
// empty, as HTCondor), for conditions and include names.
func (pp *preprocessor) expand(s string) string {
	for depth := 0; depth < 16 && strings.Contains(s, "$("); depth++ {
		next := mapMacros(s, func(name string) string {
			pp.used[strings.ToLower(name)] = true
			return pp.defs[strings.ToLower(name)]
		})
		if next == s {
			break
		}
		s = next
	}
	if len(s) > submitMacroBudget {
		s = s[:submitMacroBudget]
	}
	return s
}

// mergeStmts is the statements in force after a block: earlier blocks'
// with later values overriding, as condor_submit reads several queue
// statements.
func mergeStmts(prev, next []submitStmt) []submitStmt {
	out := make([]submitStmt, 0, len(prev)+len(next))
	set := map[string]bool{}
	for _, st := range next {
		set[st.name] = true
	}
	for _, st := range prev {
		if !set[st.name] {
			out = append(out, st)
		}
	}
	return append(out, next...)
}
