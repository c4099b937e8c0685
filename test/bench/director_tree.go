package bench

import (
	"fmt"

	"sitebox/internal/director"
)

// The tree mode runs the directors a federation of many sites would: a
// site director per site, which its servers advertise to; regional
// directors, which the site directors of their sites advertise to (each
// site director's ad lists the servers below it); and the top director,
// which the regional directors advertise to and clients ask. Each is a
// real `sitebox serve` with the director role, approved as a director
// member by the one above it.

// treeLayout assigns servers to sites and sites to regions: server i is
// at site i mod sites (as in the one-level mode), and the sites are cut
// into regions of consecutive sites, as even as they divide.
type treeLayout struct{ servers, sites, regions int }

// siteName names site k; regionName region r.
func siteName(k int) string   { return fmt.Sprintf("site%02d", k) }
func regionName(r int) string { return fmt.Sprintf("region%d", r) }

// siteOf is the site of server i.
func (l treeLayout) siteOf(i int) int { return i % l.sites }

// regionOf is the region of site k.
func (l treeLayout) regionOf(k int) int { return k * l.regions / l.sites }

// serversAt is how many servers site k has.
func (l treeLayout) serversAt(k int) int {
	n := l.servers / l.sites
	if k < l.servers%l.sites {
		n++
	}
	return n
}

// sitesIn lists the sites of region r.
func (l treeLayout) sitesIn(r int) []int {
	var out []int
	for k := range l.sites {
		if l.regionOf(k) == r {
			out = append(out, k)
		}
	}
	return out
}

// serversIn is how many servers region r has.
func (l treeLayout) serversIn(r int) int {
	n := 0
	for _, k := range l.sitesIn(r) {
		n += l.serversAt(k)
	}
	return n
}

// defaultRegions is 5, or as many as keep each region's servers within
// what a director takes from one child director (director.MaxChildren),
// at most one per site.
func defaultRegions(servers, sites int) int {
	r := 5
	for r < sites && (treeLayout{servers, sites, r}).maxRegionServers() > director.MaxChildren {
		r++
	}
	return min(r, sites)
}

func (l treeLayout) maxRegionServers() int {
	m := 0
	for r := range l.regions {
		m = max(m, l.serversIn(r))
	}
	return m
}

// check refuses a tree the directors would not take whole.
func (l treeLayout) check() error {
	switch {
	case l.regions < 1 || l.regions > l.sites:
		return fmt.Errorf("%d regions: want 1 to %d (the sites)", l.regions, l.sites)
	case l.servers < l.sites:
		return fmt.Errorf("%d servers in %d sites: a tree needs a server per site at least", l.servers, l.sites)
	case l.maxRegionServers() > director.MaxChildren:
		// A director takes at most MaxChildren servers from one child
		// director: the top would refuse the region's ads.
		return fmt.Errorf("%d regions: one would report %d servers to the top director, which takes at most %d from one child director; use more regions", l.regions, l.maxRegionServers(), director.MaxChildren)
	}
	return nil
}
