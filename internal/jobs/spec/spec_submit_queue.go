package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The queue statement in all HTCondor's forms:
//
//	queue [N]
//	queue [N] [vars] in [(] items [)]
//	queue [N] [vars] from (rows) | from FILE
//	queue [N] [var] matching [files|dirs] patterns
//
// Each item (row) makes N procs, with its values in the item variables
// (Item when none is named) and $(Step), $(ItemIndex), $(Row) set.

var queueForm = regexp.MustCompile(`(?is)^\s*(\d+)?\s*(?:([A-Za-z_][A-Za-z0-9_.]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_.]*)*)\s+)?(in|from|matching)\b\s*(.*)$`)

func (p *submitParser) parseQueue(line int, rest string) int {
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return 1
	}
	m := queueForm.FindStringSubmatch(rest)
	if m == nil {
		n, err := strconv.ParseInt(rest, 10, 64)
		switch {
		case err != nil:
			p.ps.add(line, "queue", "%q is not a positive integer, nor a queue statement HTCondor knows (queue N, queue … in, from or matching)", clipText(rest))
		case checkQueueCount(n) != "":
			p.ps.add(line, "queue", "%s", checkQueueCount(n))
		default:
			return int(n)
		}
		return 1
	}
	n := 1
	if m[1] != "" {
		c, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || checkQueueCount(c) != "" {
			p.ps.add(line, "queue", "queue count %q: must be 1 or more", m[1])
			return 1
		}
		n = int(c)
	}
	p.itemVars = []string{"Item"}
	if m[2] != "" {
		p.itemVars = splitList(m[2], ",")
	}
	body := strings.TrimSpace(m[4])
	var rows []string
	var msg string
	switch strings.ToLower(m[3]) {
	case "in":
		rows, msg = inItems(body)
	case "from":
		rows, msg = fromRows(body)
	case "matching":
		rows, msg = matchingItems(body)
	}
	if msg == "" && len(rows) == 0 {
		msg = "the item list is empty: no job would be queued"
	}
	if msg != "" {
		p.ps.add(line, "queue", "%s", msg)
		p.itemVars = nil
		return 1
	}
	for _, r := range rows {
		p.items = append(p.items, splitRow(r, len(p.itemVars)))
	}
	if msg := checkQueueCount(int64(n) * int64(len(rows))); msg != "" {
		p.ps.add(line, "queue", "%d items × %d: %s", len(rows), n, msg)
		p.itemVars, p.items = nil, nil
		return 1
	}
	return n
}

// parenBody is what is between "(" and ")", or "" and false.
func parenBody(s string) (string, bool) {
	if !strings.HasPrefix(s, "(") {
		return "", false
	}
	end := strings.LastIndex(s, ")")
	if end < 0 || strings.TrimSpace(s[end+1:]) != "" {
		return "", false
	}
	return s[1:end], true
}

// inItems: items separated by commas and blanks, in parentheses or not.
func inItems(body string) ([]string, string) {
	if inner, ok := parenBody(body); ok {
		body = inner
	} else if strings.ContainsAny(body, "()") {
		return nil, "unbalanced parentheses in the item list"
	}
	return strings.FieldsFunc(body, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }), ""
}

// fromRows: one row a line, in parentheses or in a file (relative to
// where sitebox submit runs, as condor_submit reads it).
func fromRows(body string) ([]string, string) {
	text, ok := parenBody(body)
	if !ok {
		if strings.ContainsAny(body, "()") {
			return nil, "unbalanced parentheses in the row list"
		}
		f := strings.TrimSpace(body)
		b, err := os.ReadFile(filepath.Clean(f))
		if err != nil {
			return nil, fmt.Sprintf("queue from %s: %v", f, err)
		}
		text = string(b)
	}
	var rows []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" { // a "#" line is a row too, as HTCondor reads it
			rows = append(rows, l)
		}
	}
	return rows, ""
}

// matchingItems: the files (or directories) matching the patterns, in
// the directory where sitebox submit runs.
func matchingItems(body string) ([]string, string) {
	f := strings.Fields(body)
	want := "any"
	if len(f) > 0 && (strings.EqualFold(f[0], "files") || strings.EqualFold(f[0], "dirs")) {
		want, f = strings.ToLower(f[0]), f[1:]
	}
	var out []string
	for _, pat := range f {
		ms, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Sprintf("pattern %q: %v", pat, err)
		}
		for _, m := range ms {
			fi, err := os.Stat(m)
			if err != nil || want == "files" && fi.IsDir() || want == "dirs" && !fi.IsDir() {
				continue
			}
			out = append(out, m)
		}
	}
	return out, ""
}

// splitRow gives the first n-1 variables one field each (fields separated
// by commas and blanks) and the last the rest of the row, as HTCondor.
func splitRow(row string, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n-1 {
		row = strings.TrimLeft(row, " \t,")
		i := strings.IndexAny(row, " \t,")
		if i < 0 {
			out = append(out, row)
			row = ""
			continue
		}
		out = append(out, row[:i])
		row = row[i:]
	}
	return append(out, strings.TrimSpace(strings.TrimLeft(row, " \t,")))
}

// isItemVar reports whether name is one of the queue statement's item
// variables.
func (p *submitParser) isItemVar(name string) bool {
	for _, v := range p.itemVars {
		if strings.EqualFold(v, name) {
			return true
		}
	}
	return false
}

// draft is the parsed job with, per proc, the values of the queue-time
// macros (item variables, Step, ItemIndex, Row).
func (p *submitParser) draft() specDraft {
	d := specDraft{spec: p.spec, queue: p.queue}
	rows := p.items
	if rows == nil {
		rows = [][]string{nil}
	}
	for r, row := range rows {
		for step := 0; step < p.queue; step++ {
			vars := map[string]string{"step": strconv.Itoa(step), "itemindex": strconv.Itoa(r), "row": strconv.Itoa(r)}
			for k, v := range p.itemVars {
				if k < len(row) {
					vars[strings.ToLower(v)] = row[k]
				}
			}
			d.vars = append(d.vars, vars)
		}
	}
	d.queue = len(d.vars)
	return d
}
