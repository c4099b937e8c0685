package jobs

import (
	"testing"
	"time"
)

func TestRetention(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Retention
	}{{"forever", Forever}, {"168h", Retention(168 * time.Hour)}, {"30m", Retention(30 * time.Minute)}} {
		var r Retention
		if err := r.UnmarshalText([]byte(tc.in)); err != nil || r != tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.in, r, err, tc.want)
		}
		var back Retention
		if b, _ := r.MarshalText(); back.UnmarshalText(b) != nil || back != r {
			t.Errorf("%q writes back as %q, which reads as %v", tc.in, b, back)
		}
	}
	for _, bad := range []string{"never", "0s", "-1ns", "-1h", ""} {
		var r Retention
		if err := r.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q read as %v", bad, r)
		}
	}
}
