package director

import "testing"

// A client's site is the one whose servers share its network, and none
// when servers of several sites do: also when they share one host.
func TestClientSite(t *testing.T) {
	var m siteMap
	m.note("A", "10.0.1.5")
	m.note("B", "10.0.2.5")
	if got := m.site("10.0.1.77"); got != "A" {
		t.Errorf("client on site A's network: %q, want A", got)
	}
	if got := m.site("10.0.3.1"); got != "" {
		t.Errorf("client on no site's network: %q, want none", got)
	}
	m.note("C", "10.0.2.5") // B's host, shared (one machine, NAT)
	if got := m.site("10.0.2.9"); got != "" {
		t.Errorf("client on a network two sites share through one host: %q, want none", got)
	}
}
