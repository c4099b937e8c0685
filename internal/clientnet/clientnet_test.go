package clientnet

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.17", "192.0.2.0/24"},
		{"192.0.2.255", "192.0.2.0/24"},
		{"192.0.3.1", "192.0.3.0/24"},
		{"::ffff:192.0.2.17", "192.0.2.0/24"},
		{"2001:db8:1:2:a:b:c:d", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
		{"pipe", "pipe"},
		{"", ""},
	} {
		if got := Of(tc.addr); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
