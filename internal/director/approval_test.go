package director

import (
	"errors"
	"strings"
	"testing"
)

// The names a member's endpoints may carry: each refusal with its reason.
func TestCheckHost(t *testing.T) {
	for _, c := range []struct {
		host, err string
		is        error
	}{
		{"t3.example.org", "", nil},
		{"T3-box.Example.org", "", nil},
		{"192.0.2.7", "", nil},
		{"2001:db8::7", "", nil},
		{"", "names no host", nil},
		{"*.cern.ch", "is a wildcard", nil},
		{"a*.cern.ch", "is a wildcard", nil},
		{"localhost", "loopback", ErrLoopback},
		{"box.localhost", "loopback", ErrLoopback},
		{"127.0.0.1", "loopback", ErrLoopback},
		{"127.8.9.10", "loopback", ErrLoopback},
		{"::1", "loopback", ErrLoopback},
		{"::ffff:127.0.0.1", "loopback", ErrLoopback},
		{"0.0.0.0", "unspecified", nil},
		{"::", "unspecified", nil},
		{"169.254.1.1", "link-local", nil},
		{"fe80::1", "link-local", nil},
		{"printer.local", "link-local (mDNS)", nil},
		{"224.0.0.1", "link-local", nil},
		{"239.1.2.3", "multicast", nil},
		{"ff02::1", "link-local", nil},
		{"ff05::2", "multicast", nil},
		{"255.255.255.255", "broadcast", nil},
		{"a,b", "not a host name", nil},
		{"a,b.example.org", "not a host name", nil},
		{"-a.example.org", "not a host name", nil},
		{"a..example.org", "not a host name", nil},
		{"example.org.", "not a host name", nil},
		{"under_score.example.org", "not a host name", nil},
		{"127.1", "reads as an address", nil},
		{"0x7f.1", "reads as an address", nil},
		{strings.Repeat("a", 64) + ".org", "over-long label", nil},
		{"t3box", "not a fully qualified name", ErrUnqualified},
	} {
		err := CheckHost(c.host)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CheckHost(%q) = %v, want %q", c.host, err, c.err)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("CheckHost(%q) = %v, want it to wrap %v", c.host, err, c.is)
		}
	}
}

func endpointsOf(name, root, https string) Member {
	return Member{Name: name, Key: "ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", Roles: []string{RoleOrigin}, Prefixes: []string{"/store"}, Root: root, HTTPS: https}
}

// Approval: names certified by a CA director may not be the director's
// or another member's, nor lie outside the federation's names; loopback
// names pass only on a test federation's approval, and then do not clash
// by name (every box on the machine has them), only by endpoint.
func TestApprovalPolicy(t *testing.T) {
	nc, err := ParseNameConstraints([]string{"example.org"}, []string{"192.0.2.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	ca := ApprovalPolicy{CA: true, Constraints: nc, OwnNames: []string{"region.example.org", "192.0.2.1"}, OwnEndpoints: []string{"region.example.org:8443"}}
	others := []Member{endpointsOf("a", "a.example.org:1094", "https://a.example.org:8443"), endpointsOf("b", "127.0.0.1:2000", "")}
	for _, c := range []struct {
		name   string
		p      ApprovalPolicy
		m      Member
		reason string // "" approves
	}{
		{"fresh names", ca, endpointsOf("c", "c.example.org:1094", "https://192.0.2.9:8443"), ""},
		{"re-approval of the same member", ca, endpointsOf("a", "a.example.org:1094", ""), ""},
		{"the director's name", ca, endpointsOf("c", "region.example.org:1094", ""), "this director's own name"},
		{"the director's address", ca, endpointsOf("c", "192.0.2.1:1094", ""), "this director's own name"},
		{"the director's endpoint", ca, endpointsOf("c", "", "https://REGION.example.org:8443"), "this director's own endpoint"},
		{"another member's name", ca, endpointsOf("c", "", "https://a.example.org:9443"), `"a.example.org" is member a's`},
		{"outside the domains", ca, endpointsOf("c", "accounts.google.com:1094", ""), "outside the federation's domains"},
		{"outside the networks", ca, endpointsOf("c", "198.51.100.1:1094", ""), "outside the federation's address ranges"},
		{"wildcard", ca, endpointsOf("c", "*.example.org:1094", ""), "wildcard"},
		{"loopback", ca, endpointsOf("c", "localhost:1094", ""), "--allow-loopback"},
		{"short name, CA", ca, endpointsOf("c", "t3box:1094", ""), "not a fully qualified name"},
		{"short name, no CA", ApprovalPolicy{}, endpointsOf("c", "t3box:1094", ""), ""},
		{"no port", ca, endpointsOf("c", "c.example.org", ""), "want host:port"},
		{"https with a user", ca, endpointsOf("c", "", "https://u@c.example.org:1"), "want https://host:port"},
		{"every reason at once", ca, endpointsOf("c", "0.0.0.0:1094", "https://a,b:1"), "unspecified address, no host; https endpoint: \"a,b\" is not a host name"},
		{"test federation: loopback", ApprovalPolicy{AllowLoopback: true, CA: true, OwnNames: []string{"127.0.0.1"}, OwnEndpoints: []string{"127.0.0.1:8443"}},
			endpointsOf("c", "127.0.0.1:1094", "https://127.0.0.1:9443"), ""},
		{"test federation: another member's endpoint", ApprovalPolicy{AllowLoopback: true, CA: true},
			endpointsOf("c", "127.0.0.1:2000", ""), "127.0.0.1:2000 is member b's endpoint"},
		{"test federation: the director's endpoint", ApprovalPolicy{AllowLoopback: true, OwnEndpoints: []string{"127.0.0.1:8443"}},
			endpointsOf("c", "", "https://127.0.0.1:8443"), "this director's own endpoint"},
	} {
		err := c.p.Check(c.m, others)
		if c.reason == "" && err != nil || c.reason != "" && (err == nil || !strings.Contains(err.Error(), c.reason)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.reason)
		}
	}
}

// A box learns at join what no director approves, and what only some do.
func TestCheckJoinHosts(t *testing.T) {
	notes, err := CheckJoinHosts(endpointsOf("c", "127.0.0.1:1094", "https://t3box:8443"))
	if err != nil || len(notes) != 2 || !strings.Contains(notes[0], "--allow-loopback") || !strings.Contains(notes[1], "https_url") {
		t.Errorf("notes %q, err %v", notes, err)
	}
	if _, err := CheckJoinHosts(endpointsOf("c", "*.cern.ch:1094", "")); err == nil || !strings.Contains(err.Error(), "wildcard") {
		t.Errorf("wildcard at join: %v", err)
	}
}
