package config

import (
	"errors"
	"strings"
	"testing"
)

// problemsIn parses text, which must have problems, and returns them.
func problemsIn(t *testing.T, name, text string) *Problems {
	t.Helper()
	_, _, err := Parse(name, []byte(text))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	return ps
}

// wantProblems fails for each problem of want (as printed, "line N:
// key: message") that ps does not name.
func wantProblems(t *testing.T, ps *Problems, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(ps.Error(), w) {
			t.Errorf("missing %q in\n%v", w, ps)
		}
	}
}
