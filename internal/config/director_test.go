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

// A director beside data roles needs listeners of its own; the problems
// name the keys to set, and the prefixes exported and cached stay apart.
func TestDirectorBesideData(t *testing.T) {
	dir := t.TempDir()
	base := "[server]\nname = \"site\"\n[root]\naddr = \"127.0.0.1:1094\"\n[https]\naddr = \"127.0.0.1:8443\"\n" +
		"[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n"
	tests := []struct {
		name, text string
		want       []string // problem keys; none: valid
		msg        string
	}{
		{name: "all roles, own listeners", text: base + "[director]\nenabled = true\nroot_addr = \"127.0.0.1:1095\"\nhttps_addr = \"127.0.0.1:8444\"\n" +
			"[cache]\ndir = \"" + dir + "\"\n[[cache.route]]\nprefix = \"/remote\"\nupstreams = [\"root://region.example.org:1094\"]\n"},
		{name: "shared listeners", text: base + "[director]\nenabled = true\n", want: []string{"director.enabled"}, msg: "root_addr"},
		{name: "same port as data", text: base + "[director]\nenabled = true\nroot_addr = \"127.0.0.1:1094\"\n", want: []string{"director.root_addr"}, msg: "port 1094"},
		{name: "both off", text: base + "[director]\nenabled = true\nroot_addr = \"off\"\nhttps_addr = \"off\"\n", want: []string{"director.root_addr"}, msg: "no listener"},
		{name: "not enabled", text: base + "[director]\nroot_addr = \"127.0.0.1:1095\"\n", want: []string{"director.root_addr"}, msg: "enabled"},
		{name: "data root off", text: strings.Replace(base, "127.0.0.1:1094", "off", 1) + "[director]\nenabled = true\nroot_addr = \"127.0.0.1:1095\"\n", want: []string{"root.addr"}, msg: "over root://"},
		{name: "exported and cached overlap", text: base + "[director]\nenabled = true\nroot_addr = \"127.0.0.1:1095\"\n" +
			"[cache]\ndir = \"" + dir + "\"\n[[cache.route]]\nprefix = \"/store/mc\"\nupstreams = [\"root://region.example.org:1094\"]\n",
			want: []string{"cache.route[1].prefix"}, msg: "either exported or cached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("site.toml", []byte(tc.text))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			var ps *Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse error = %v, want *Problems", err)
			}
			for _, k := range tc.want {
				found := false
				for _, p := range ps.List {
					found = found || p.Key == k && strings.Contains(p.Msg, tc.msg)
				}
				if !found {
					t.Errorf("no problem %s mentioning %q; got %v", k, tc.msg, ps.List)
				}
			}
		})
	}
}
