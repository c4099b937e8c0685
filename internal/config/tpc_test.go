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

func TestTPCBufferMemory(t *testing.T) {
	dir := t.TempDir()
	base := "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n"
	c, _, err := Parse("site.toml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ total, want int64 }{
		{0, 256 << 20},        // unknown
		{512 << 20, 64 << 20}, // small machine: the floor
		{8 << 30, 512 << 20},  // a sixteenth
		{256 << 30, 1 << 30},  // large machine: the ceiling
	} {
		if got := c.TPC.BufferBytes(tc.total); got != tc.want {
			t.Errorf("default buffer memory with %d MiB: %d MiB, want %d MiB", tc.total>>20, got>>20, tc.want>>20)
		}
	}
	c, _, err = Parse("site.toml", []byte(base+"\n[tpc]\nbuffer_memory = \"96MiB\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.TPC.BufferBytes(8 << 30); got != 96<<20 {
		t.Errorf("buffer_memory = 96MiB gives %d", got)
	}
	for _, bad := range []string{"lots", "1MiB", "-5"} {
		_, _, err = Parse("site.toml", []byte(base+"\n[tpc]\nbuffer_memory = \""+bad+"\"\n"))
		var ps *Problems
		if !errors.As(err, &ps) || len(ps.List) != 1 || ps.List[0].Key != "tpc.buffer_memory" || !strings.Contains(ps.List[0].Msg, bad) || !strings.Contains(ps.List[0].Msg, "4.0 MiB") {
			t.Errorf("buffer_memory = %q: %v, want one problem naming it and the minimum", bad, err)
		}
	}
}
