package units

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1GiB", 1 << 30, true}, {"50MB", 50e6, true}, {"4k", 4096, true},
		{"1.5MiB", 3 << 19, true}, {"123", 123, true}, {"-1", 0, false}, {"lots", 0, false},
	} {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if s := FormatSize(3 << 29); s != "1.5 GiB" {
		t.Errorf("FormatSize = %q", s)
	}
}
