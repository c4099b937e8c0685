package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

func TestSimStoreHolders(t *testing.T) {
	const total = 30
	for _, n := range []int{1, 10, 100} {
		for k := range 5 {
			p := scalePath(n, k)
			held := 0
			for i := range total {
				if (simStore{i: i, total: total}).holds(p) {
					held++
				}
			}
			if want := min(n, total); held != want {
				t.Errorf("%s: held by %d of %d servers, want %d", p, held, total, want)
			}
		}
	}
	for _, p := range []string{scalePath(0, 3), "/scale/h1/x", "/scale/h/f1", "/other/h1/f1"} {
		if (simStore{i: 0, total: total}).holds(p) {
			t.Errorf("%s: held, want not", p)
		}
	}
}

// TestDirectorScaleSmall runs the scale mode end to end with a few
// servers: signed ads accepted, every locate answered, redirects given.
// Figures are not checked; speed is the benchmark's business.
func TestDirectorScaleSmall(t *testing.T) {
	bin := siteboxBinary(t)
	peers.Require(t, "xrootd")
	peers.Require(t, "cmsd")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := DirectorScale(ctx, DirectorScaleConfig{
		Sitebox: bin, WorkDir: t.TempDir(), Servers: 50, Sites: 5,
		Interval: time.Second, AdWindow: 2 * time.Second, Files: 5,
		Clients: 2, Duration: time.Second, Cmsd: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.AdFailures != 0 || rep.AdsPerSec <= 0 {
		t.Errorf("ads: %.1f/s absorbed, %d failed (first: %s)", rep.AdsPerSec, rep.AdFailures, rep.AdFirstError)
	}
	if len(rep.Locate) != len(holderClasses) {
		t.Fatalf("%d locate rows, want %d", len(rep.Locate), len(holderClasses))
	}
	for _, l := range rep.Locate {
		if l.Err != "" {
			t.Errorf("locate held by %d: %s", l.Holders, l.Err)
		}
	}
	if p := rep.Redirects; p.Err != "" || p.Done == 0 || p.Errors != 0 {
		t.Errorf("redirects: %d done, %d errors, err %q, first %q", p.Done, p.Errors, p.Err, p.FirstError)
	}
	if rep.Cmsd == nil || rep.Cmsd.Err != "" {
		t.Errorf("cmsd baseline: %+v", rep.Cmsd)
	}
	out := FormatDirectorScale(rep)
	for _, want := range []string{"ads/s absorbed", "| 10 server(s) |", "none (missing)", "sitebox director, 50 servers", "Director peak RSS"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
