package config

import (
	"errors"
	"strings"
	"testing"
)

func TestTPCAllow(t *testing.T) {
	dir := t.TempDir()
	base := "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n"

	c, _, err := Parse("site.toml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	c.ApplyDefaults("box", false)
	if len(c.TPC.Allow) != 1 || c.TPC.Allow[0] != "*" {
		t.Errorf("default tpc.allow = %q, want [\"*\"]", c.TPC.Allow)
	}
	if err := c.TPC.Policy().CheckHost("se.example.org:1094"); err != nil {
		t.Errorf("default policy refuses a public name: %v", err)
	}
	if err := c.TPC.Policy().CheckHost("127.0.0.1:1094"); err == nil {
		t.Error("default policy allows loopback")
	}

	_, _, err = Parse("site.toml", []byte(base+"\n[tpc]\nallow = [\"*.cern.ch\", \"10.0.0.0/99\"]\n"))
	var ps *Problems
	if !errors.As(err, &ps) || len(ps.List) != 1 || ps.List[0].Key != "tpc.allow" || !strings.Contains(ps.List[0].Msg, "10.0.0.0/99") {
		t.Fatalf("bad entry: %v, want one tpc.allow problem naming it", err)
	}

	c, _, err = Parse("site.toml", []byte(base+"\n[tpc]\nallow = []\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.ApplyDefaults("box", false)
	if err := c.TPC.Policy().CheckHost("se.example.org"); err == nil {
		t.Error("allow = [] allows a copy")
	}
}
