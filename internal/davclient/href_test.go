package davclient

import "testing"

func TestHrefName(t *testing.T) {
	tests := []struct{ href, want string }{
		{"/store/plain.txt", "plain.txt"},
		{"/store/a%20b%C3%BC.txt", "a bü.txt"},
		{"/store/p%2541q.txt", "p%41q.txt"}, // decoded once, not twice
		{"/store/it's(1)!.txt", "it's(1)!.txt"},
		{"/store/q%3Fx%23y", "q?x#y"},
		{"/store/sub%20dir/", "sub dir"},
		{"https://host:8443/store/f%20g", "f g"},
		{"/store/a b.txt", "a b.txt"}, // XrdHttp: unescaped
		{"/store/100%", "100%"},       // XrdHttp: not a URL, taken as it is
	}
	for _, tt := range tests {
		if got := hrefName(tt.href); got != tt.want {
			t.Errorf("hrefName(%q) = %q, want %q", tt.href, got, tt.want)
		}
	}
}
