package tpcallow

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
)

func TestParseRefusesBadEntries(t *testing.T) {
	for _, e := range []string{"", "*.", "a*b.org", "10.0.0.0/33", "host name", "*.*.org", "ex ample.org"} {
		if _, err := Parse([]string{e}); err == nil {
			t.Errorf("Parse(%q) accepted", e)
		} else if !strings.Contains(err.Error(), e) && e != "" {
			t.Errorf("Parse(%q): error %q does not name the entry", e, err)
		}
	}
	if _, err := Parse([]string{"*", "*.cern.ch", "eos.example.org", "192.0.2.0/24", "2001:db8::/32", "10.1.2.3", "::1"}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckHost(t *testing.T) {
	tests := []struct {
		name  string
		allow []string
		host  string
		ok    bool
	}{
		{"any name", []string{"*"}, "eospublic.cern.ch:1094", true},
		{"public literal with *", []string{"*"}, "192.0.2.1:443", true},
		{"loopback literal with *", []string{"*"}, "127.0.0.1:1094", false},
		{"ipv6 loopback", []string{"*"}, "[::1]:1094", false},
		{"mapped loopback", []string{"*"}, "[::ffff:127.0.0.1]:1094", false},
		{"private literal", []string{"*"}, "10.0.0.5:1094", false},
		{"link-local (cloud metadata)", []string{"*"}, "169.254.169.254:80", false},
		{"unspecified", []string{"*"}, "0.0.0.0:1094", false},
		{"cgnat", []string{"*"}, "100.64.1.1:1094", false},
		{"ula", []string{"*"}, "[fd00::1]:1094", false},
		{"listed loopback", []string{"127.0.0.1"}, "127.0.0.1:1094", true},
		{"listed private range", []string{"10.1.0.0/16"}, "10.1.4.2:1094", true},
		{"outside listed range", []string{"10.1.0.0/16"}, "10.2.0.1:1094", false},
		{"domain pattern", []string{"*.cern.ch"}, "eospublic.cern.ch:1094", true},
		{"domain pattern is not a suffix match", []string{"*.cern.ch"}, "evilcern.ch:1094", false},
		{"domain pattern case", []string{"*.CERN.ch"}, "EOS.cern.CH.:1094", true},
		{"name not listed", []string{"*.cern.ch"}, "example.org:443", false},
		{"public literal without *", []string{"*.cern.ch"}, "192.0.2.1:443", false},
		{"exact name", []string{"se.example.org"}, "se.example.org", true},
		{"empty list", []string{}, "se.example.org", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.allow)
			if err != nil {
				t.Fatal(err)
			}
			err = p.CheckHost(tc.host)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckHost(%q) with %v: %v, want ok=%v", tc.host, tc.allow, err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrRefused) || !errors.Is(err, store.ErrPermission)) {
				t.Errorf("refusal %v wraps neither ErrRefused nor store.ErrPermission", err)
			}
		})
	}
}

// TestDialChecksResolvedAddress: a name the list allows ("*") that
// resolves to a loopback address is refused when connecting, as a name
// made to resolve to an internal address after the check would be.
func TestDialChecksResolvedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	p, _ := Parse([]string{"*"})
	_, err = p.DialContext(ctx, "tcp", "localhost:"+port)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "localhost is at ") || !strings.Contains(err.Error(), "a loopback address") {
		t.Fatalf("dial localhost with [\"*\"]: %v, want a refusal naming host and address", err)
	}

	p, _ = Parse([]string{"*", "127.0.0.0/8"})
	c, err := p.DialContext(ctx, "tcp", "localhost:"+port)
	if err != nil {
		t.Fatalf("dial localhost with 127.0.0.0/8 listed: %v", err)
	}
	c.Close()
}

func TestSpecialAddresses(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "::1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "fe80::1",
		"0.0.0.0", "::", "100.64.0.1", "224.0.0.1", "fd12::1", "198.18.0.1", "240.0.0.1", "255.255.255.255", "64:ff9b::7f00:1", "64:ff9b::a00:1"} {
		if special(netip.MustParseAddr(s)) == "" {
			t.Errorf("%s counted as public", s)
		}
	}
	for _, s := range []string{"188.184.21.108", "2001:1458:201::1", "8.8.8.8", "64:ff9b::bcb8:156c"} {
		if k := special(netip.MustParseAddr(s)); k != "" {
			t.Errorf("%s counted as %s", s, k)
		}
	}
}

// TestEmbeddedIPv4 covers every IPv6 form a dialer would deliver to an
// IPv4 address: each that carries a special IPv4 address is that kind,
// at CheckHost (a literal in the URL) and at CheckAddr (what a name
// resolved to), and the refusal says which kind.
func TestEmbeddedIPv4(t *testing.T) {
	refusedForms := map[string]string{
		"::ffff:127.0.0.1":                     "loopback",   // IPv4-mapped
		"::127.0.0.1":                          "loopback",   // IPv4-compatible (deprecated)
		"::7f00:1":                             "loopback",   // the same, written in hex
		"::10.0.0.5":                           "private",    // IPv4-compatible
		"::169.254.169.254":                    "link-local", // cloud metadata, IPv4-compatible
		"::8.8.8.8":                            "IPv4-compatible",
		"::ffff:0:127.0.0.1":                   "loopback", // IPv4-translated (SIIT)
		"::ffff:0:8.8.8.8":                     "IPv4-translated",
		"64:ff9b::127.0.0.1":                   "loopback", // NAT64
		"64:ff9b::10.0.0.5":                    "private",
		"2002:7f00:1::1":                       "loopback", // 6to4 of 127.0.0.1
		"2002:a9fe:a9fe::1":                    "link-local",
		"2001:0:7f00:1::":                      "loopback", // Teredo server 127.0.0.1
		"2001:0:4136:e378:8000:63bf:f5ff:fffa": "private",  // Teredo client 10.0.0.5 (inverted)
		"100::1":                               "discard-only",
		"2001:db8::1":                          "documentation",
	}
	p, _ := Parse([]string{"*"})
	for addr, kind := range refusedForms {
		err := p.CheckHost("[" + addr + "]:1094")
		if err == nil || !strings.Contains(err.Error(), kind) {
			t.Errorf("CheckHost([%s]): %v, want a refusal naming %q", addr, err, kind)
		}
		err = p.CheckAddr("data.example.org", netip.MustParseAddr(addr))
		if err == nil || !strings.Contains(err.Error(), kind) || !strings.Contains(err.Error(), "data.example.org is at") {
			t.Errorf("CheckAddr(data.example.org, %s): %v, want a refusal naming the host and %q", addr, err, kind)
		}
	}
	// Forms that carry a public IPv4 address, through a gateway or tunnel
	// that reaches the Internet, stay public.
	for _, addr := range []string{"::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"} {
		if err := p.CheckHost("[" + addr + "]:1094"); err != nil {
			t.Errorf("CheckHost([%s]): %v, want allowed (public)", addr, err)
		}
	}
	// A listed range opens its own addresses only: 127.0.0.0/8 is not
	// ::127.0.0.1.
	p, _ = Parse([]string{"*", "127.0.0.0/8"})
	if err := p.CheckHost("[::ffff:127.0.0.1]:1094"); err != nil {
		t.Errorf("mapped 127.0.0.1 with 127.0.0.0/8 listed: %v", err)
	}
	if err := p.CheckHost("[::127.0.0.1]:1094"); err == nil {
		t.Error("IPv4-compatible ::127.0.0.1 allowed by 127.0.0.0/8")
	}
}

// TestDialRefusesEmbeddedLoopback dials the forms through DialContext,
// which judges the address the kernel is asked to connect to.
func TestDialRefusesEmbeddedLoopback(t *testing.T) {
	p, _ := Parse([]string{"*"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, host := range []string{"[::127.0.0.1]", "[::ffff:127.0.0.1]", "[::ffff:0:127.0.0.1]", "[2002:7f00:1::1]", "127.0.0.1."} {
		c, err := p.DialContext(ctx, "tcp", host+":1")
		if c != nil {
			c.Close()
		}
		if !errors.Is(err, ErrRefused) {
			t.Errorf("dial %s: %v, want a refusal", host, err)
		}
	}
}
