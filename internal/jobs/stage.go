package jobs

import (
	"path"
	"strings"

	"sitebox/internal/jobs/spec"
)

// inputName is the sandbox name of an input: As, else the last element
// of its URL or path.
func inputName(in spec.Input) string {
	if in.As != "" {
		return in.As
	}
	p := in.From
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	return path.Base(p)
}
