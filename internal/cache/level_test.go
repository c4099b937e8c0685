package cache

import "testing"

// A watermark reads once into the number the purge compares with, and
// writes back as the file would.
func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		in    string
		bytes bool
		want  float64
		out   string
	}{
		{"90%", true, 0.9, "90%"}, {"12.5%", false, 0.125, "12.5%"}, {"100%", true, 1, "100%"},
		{"500GiB", true, 500 << 30, "500GiB"}, {"1000000", false, 1e6, "1000000"},
	} {
		var got float64
		var out string
		if tc.bytes {
			var l ByteLevel
			if err := l.UnmarshalText([]byte(tc.in)); err != nil {
				t.Fatalf("%q: %v", tc.in, err)
			}
			got, out = float64(l), l.String()
		} else {
			var l FileLevel
			if err := l.UnmarshalText([]byte(tc.in)); err != nil {
				t.Fatalf("%q: %v", tc.in, err)
			}
			got, out = float64(l), l.String()
		}
		if got != tc.want || out != tc.out {
			t.Errorf("%q reads %v, writes %q; want %v, %q", tc.in, got, out, tc.want, tc.out)
		}
	}
	for _, bad := range []string{"0%", "101%", "1", "lots", "-5"} {
		var l ByteLevel
		if err := l.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q read as %v", bad, float64(l))
		}
	}
	var f FileLevel
	if err := f.UnmarshalText([]byte("10GiB")); err == nil {
		t.Errorf("a size read as a number of files: %v", float64(f))
	}
}
