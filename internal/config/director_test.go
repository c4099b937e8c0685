package config

import (
	"errors"
	"strings"
	"testing"
)

// [[director.member]] entries are checked like the rest: each problem
// named by its key.
func TestDirectorMembers(t *testing.T) {
	text := `[server]
name = "region"
[director]
enabled = true
[[director.member]]
name = "t3-origin"
key = "ed25519:oXqeCXq8XZ2xd3nembYuGi2hEOuXVdDdWwi8LK7qU1o="
roles = ["origin"]
prefixes = ["/store/t3"]
root = "root://t3.example.org:1094"
[[director.member]]
name = "t3-origin"
key = "ssh-rsa AAAA"
roles = ["boss"]
prefixes = ["store"]
`
	_, _, err := Parse("site.toml", []byte(text))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	got := map[string]bool{}
	for _, p := range ps.List {
		got[p.Key] = true
	}
	for _, k := range []string{"director.member[2].name", "director.member[2].key", "director.member[2].roles", "director.member[2].prefixes", "director.member[2].root"} {
		if !got[k] {
			t.Errorf("no problem for %s (all: %v)", k, ps.List)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "director.member[1]") {
			t.Errorf("the valid member has a problem: %v", ps.List)
		}
	}
}
