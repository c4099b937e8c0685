package doctor

import (
	"fmt"
	"strings"
)

// mark is the sign of a status in the text report.
func mark(s Status) string {
	switch s {
	case StatusOK:
		return "✓"
	case StatusWarn:
		return "!"
	case StatusError:
		return "✗"
	}
	return "-"
}

// textWidth is where explanations are wrapped, for an 80-column terminal.
const textWidth = 78

// Text prints the report for a person: checks under their group, each
// problem followed by why it matters and the fix, then a count.
func (r *Report) Text() string {
	var b strings.Builder
	group := ""
	count := map[Status]int{}
	for _, c := range r.Checks {
		count[c.Status]++
		if c.Group != group {
			if group != "" {
				b.WriteByte('\n')
			}
			group = c.Group
			b.WriteString(group + "\n")
		}
		head := fmt.Sprintf("  %s %s: ", mark(c.Status), c.Name)
		wrap(&b, head, strings.Repeat(" ", 4), c.Summary)
		if c.Status == StatusWarn || c.Status == StatusError {
			if c.Explain != "" {
				wrap(&b, "    why: ", strings.Repeat(" ", 9), c.Explain)
			}
			if c.Fix != "" {
				wrap(&b, "    fix: ", strings.Repeat(" ", 9), c.Fix)
			}
		} else if c.Explain != "" {
			wrap(&b, "    note: ", strings.Repeat(" ", 10), c.Explain)
		}
	}
	fmt.Fprintf(&b, "\n%d ok, %d warning(s), %d error(s), %d skipped\n",
		count[StatusOK], count[StatusWarn], count[StatusError], count[StatusSkip])
	return b.String()
}

// wrap writes first followed by text, folded at textWidth with the
// following lines indented by indent. Multi-line text keeps its lines.
func wrap(b *strings.Builder, first, indent, text string) {
	line := first
	fresh := true // nothing after the prefix yet
	flush := func() {
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		line, fresh = indent, true
	}
	for i, para := range strings.Split(text, "\n") {
		if i > 0 {
			flush()
		}
		for _, w := range strings.Fields(para) {
			if !fresh && len([]rune(line))+1+len([]rune(w)) > textWidth {
				flush()
			}
			if !fresh {
				line += " "
			}
			line += w
			fresh = false
		}
	}
	flush()
}
