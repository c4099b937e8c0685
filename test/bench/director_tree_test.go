package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"sitebox/internal/director"
)

// Every server is at one site, every site in one region, the regions
// are consecutive sites about as even as they divide, and the counts
// add up.
func TestTreeLayout(t *testing.T) {
	for _, l := range []treeLayout{{1000, 50, 5}, {1003, 50, 7}, {50, 5, 2}, {10000, 50, 10}, {60, 50, 50}} {
		perSite := make([]int, l.sites)
		for i := range l.servers {
			perSite[l.siteOf(i)]++
		}
		total, lastSite := 0, 0
		for r := range l.regions {
			sites := l.sitesIn(r)
			if len(sites) < l.sites/l.regions || len(sites) > (l.sites+l.regions-1)/l.regions {
				t.Errorf("%+v: region %d has %d sites", l, r, len(sites))
			}
			n := 0
			for _, k := range sites {
				if l.regionOf(k) != r || k < lastSite {
					t.Errorf("%+v: site %d listed in region %d, out of order or of region %d", l, k, r, l.regionOf(k))
				}
				lastSite = k
				if perSite[k] != l.serversAt(k) {
					t.Errorf("%+v: site %d has %d servers, serversAt says %d", l, k, perSite[k], l.serversAt(k))
				}
				n += perSite[k]
			}
			if n != l.serversIn(r) {
				t.Errorf("%+v: region %d has %d servers, serversIn says %d", l, r, n, l.serversIn(r))
			}
			total += n
		}
		if total != l.servers {
			t.Errorf("%+v: %d servers in the regions", l, total)
		}
	}
}

// The default regions keep each within what a director takes from one
// child director; a tree the top would refuse is refused first, saying
// why.
func TestTreeRegions(t *testing.T) {
	for _, tc := range []struct{ servers, sites, want int }{{1000, 50, 5}, {5000, 50, 5}, {10000, 50, 10}, {15000, 50, 17}, {20, 3, 3}} {
		got := defaultRegions(tc.servers, tc.sites)
		if got != tc.want {
			t.Errorf("%d servers in %d sites: %d regions, want %d", tc.servers, tc.sites, got, tc.want)
		}
		if err := (treeLayout{tc.servers, tc.sites, got}).check(); err != nil {
			t.Errorf("%d servers in %d sites, %d regions: %v", tc.servers, tc.sites, got, err)
		}
	}
	for _, tc := range []struct {
		l    treeLayout
		want string
	}{
		{treeLayout{10000, 50, 5}, "takes at most 1000"},
		{treeLayout{1000, 50, 0}, "want 1 to 50"},
		{treeLayout{1000, 50, 51}, "want 1 to 50"},
		{treeLayout{40, 50, 5}, "a server per site"},
	} {
		err := tc.l.check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error saying %q", tc.l, err, tc.want)
		}
	}
	if director.MaxChildren != 1000 {
		t.Logf("director.MaxChildren is %d: the cases above assume 1000", director.MaxChildren)
	}
}

// TestDirectorScaleTreeSmall runs the tree mode end to end with a few
// servers: every level absorbs its ads, every locate through the top is
// answered, redirects are given.
func TestDirectorScaleTreeSmall(t *testing.T) {
	bin := siteboxBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := DirectorScale(ctx, DirectorScaleConfig{
		Sitebox: bin, WorkDir: t.TempDir(), Servers: 30, Sites: 5, Regions: 2, Tree: true,
		Interval: time.Second, AdWindow: 3 * time.Second, Files: 5,
		Clients: 2, Duration: time.Second, Rounds: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Usable != 30 || rep.AdFailures != 0 || rep.AdsPerSec <= 0 {
		t.Errorf("%d usable; ads %.1f/s absorbed, %d failed (first: %s)", rep.Usable, rep.AdsPerSec, rep.AdFailures, rep.AdFirstError)
	}
	if len(rep.Levels) != 3 {
		t.Fatalf("%d levels, want 3", len(rep.Levels))
	}
	for _, l := range rep.Levels {
		if l.Err != "" || l.Accepted == 0 || l.Refused != 0 || l.PeakRSS == 0 {
			t.Errorf("%s: %+v", l.Level, l)
		}
	}
	for _, l := range rep.Locate {
		if l.Err != "" {
			t.Errorf("locate held by %d: %s", l.Holders, l.Err)
		}
	}
	if p := rep.Redirects; p.Err != "" || p.Done == 0 || p.Errors != 0 {
		t.Errorf("redirects: %d done, %d errors, err %q, first %q", p.Done, p.Errors, p.Err, p.FirstError)
	}
	out := FormatDirectorScale(rep)
	for _, want := range []string{"three-level tree", "| regional directors | 2 |", "| top director | 1 |", "sitebox top director, 30 servers in a tree"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A level keeps up when short of the ads expected by at most one per
// sender and a tenth, refusing none.
func TestTreeLevelKeepsUp(t *testing.T) {
	for _, tc := range []struct {
		l    TreeLevel
		want bool
	}{
		{TreeLevel{Senders: 10, Expected: 20, Accepted: 18}, true},
		{TreeLevel{Senders: 10, Expected: 20, Accepted: 17}, false},
		{TreeLevel{Senders: 10, Expected: 20, Accepted: 20, Refused: 1}, false},
		{TreeLevel{Senders: 1, Expected: 2, Accepted: 1}, true},
		{TreeLevel{Senders: 10000, Expected: 20000, Accepted: 18000}, true},
		{TreeLevel{Senders: 10000, Expected: 20000, Accepted: 17999}, false},
		{TreeLevel{Senders: 5, Expected: 10, Accepted: 10, Err: "metrics: 404"}, false},
	} {
		if got := tc.l.KeepsUp(); got != tc.want {
			t.Errorf("%+v: keeps up %v, want %v", tc.l, got, tc.want)
		}
	}
}
