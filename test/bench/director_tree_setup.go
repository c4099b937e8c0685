package bench

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitebox/internal/director"
)

// scaleTree is the running tree of directors.
type scaleTree struct {
	layout  treeLayout
	top     *scaleDirector
	regions []*scaleDirector
	sites   []*scaleDirector
}

// treeLevel is the directors of one level, bottom up.
type treeLevel struct {
	name string
	dirs []*scaleDirector
}

func (t *scaleTree) levels() []treeLevel {
	return []treeLevel{{"site directors", t.sites}, {"regional directors", t.regions}, {"top director", []*scaleDirector{t.top}}}
}

// targets are the site directors, where each site's servers advertise.
func (t *scaleTree) targets() []adTarget {
	out := make([]adTarget, len(t.sites))
	for k, d := range t.sites {
		out[k] = adTarget{https: d.https, caFile: d.caFile}
	}
	return out
}

// stop stops every director, top last.
func (t *scaleTree) stop() {
	for _, l := range t.levels() {
		for _, d := range l.dirs {
			if d != nil {
				d.stop()
			}
		}
	}
}

// startScaleTree starts the top director, then the regional directors
// advertising to it, then the site directors advertising to theirs, each
// level's directors approved by the level above before they start, and
// the servers of each site by its site director. Directors advertise at
// the servers' interval.
func startScaleTree(ctx context.Context, bin, dir string, fl *simFleet, l treeLayout, interval time.Duration) (*scaleTree, error) {
	t := &scaleTree{layout: l, regions: make([]*scaleDirector, l.regions), sites: make([]*scaleDirector, l.sites)}
	top, err := newDirectorSpec("bench-director", "", filepath.Join(dir, "top"), true)
	if err != nil {
		return nil, err
	}
	top.maxServers = l.servers + l.regions
	regions := make([]*directorSpec, l.regions)
	regionMembers := make([][]director.Member, l.regions)
	var topMembers []director.Member
	for r := range regions {
		if regions[r], err = newDirectorSpec(fmt.Sprintf("rd%d", r), regionName(r), filepath.Join(dir, regionName(r)), true); err != nil {
			return nil, err
		}
		regions[r].maxServers, regions[r].interval = l.serversIn(r)+len(l.sitesIn(r)), interval
		m, err := regions[r].member()
		if err != nil {
			return nil, err
		}
		topMembers = append(topMembers, m)
	}
	top.approve = func(file string) error { return approveMembers(file, topMembers) }
	sites := make([]*directorSpec, l.sites)
	for k := range sites {
		if sites[k], err = newDirectorSpec(fmt.Sprintf("sd%02d", k), siteName(k), filepath.Join(dir, siteName(k)), true); err != nil {
			return nil, err
		}
		sites[k].maxServers, sites[k].interval, sites[k].approve = l.serversAt(k), interval, fl.approveSite(k, l.sites)
		m, err := sites[k].member()
		if err != nil {
			return nil, err
		}
		r := l.regionOf(k)
		regionMembers[r] = append(regionMembers[r], m)
	}
	for r, s := range regions {
		s.approve = func(file string) error { return approveMembers(file, regionMembers[r]) }
	}

	if t.top, err = top.start(ctx, bin); err != nil {
		return nil, err
	}
	for _, s := range regions {
		s.parent = t.top
	}
	if err := startDirectors(ctx, bin, regions, t.regions); err != nil {
		t.stop()
		return nil, err
	}
	for k, s := range sites {
		s.parent = t.regions[l.regionOf(k)]
	}
	if err := startDirectors(ctx, bin, sites, t.sites); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

// member is the director's approval by its parent: a director member
// for the benchmark's prefix at its site and endpoints, with the
// federation key it will sign with (made now in its state dir, where
// its box finds it).
func (s *directorSpec) member() (director.Member, error) {
	key, err := director.LoadOrCreateKey(director.KeyFile(s.state()))
	if err != nil {
		return director.Member{}, err
	}
	root, https := s.endpoints()
	return director.Member{Name: s.name, Site: s.site, Key: director.FormatKey(key.Public().(ed25519.PublicKey)),
		Roles: []string{director.RoleDirector}, Prefixes: []string{scalePrefix}, Root: root, HTTPS: https}, nil
}

// startDirectors starts the directors of one level at once, into out;
// on an error those started stay in out, for the caller to stop.
func startDirectors(ctx context.Context, bin string, specs []*directorSpec, out []*scaleDirector) error {
	var wg sync.WaitGroup
	errs := make([]error, len(specs))
	for i, s := range specs {
		wg.Go(func() { out[i], errs[i] = s.start(ctx, bin) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// adTally is a director's advertisement counters, from its /metrics.
type adTally struct{ accepted, refused, entries int64 }

// adTally reads the director's advertisement counters from its
// /metrics.
func (d *scaleDirector) adTally(ctx context.Context) (adTally, error) {
	var t adTally
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.metrics, nil)
	if err != nil {
		return t, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return t, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return t, fmt.Errorf("metrics: %s", resp.Status)
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		var dst *int64
		switch name {
		case `sitebox_director_advertisements_total{result="accepted"}`:
			dst = &t.accepted
		case `sitebox_director_advertisements_total{result="refused"}`:
			dst = &t.refused
		case "sitebox_director_advertised_servers_total":
			dst = &t.entries
		}
		if !ok || dst == nil {
			continue
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return t, fmt.Errorf("metrics: %s %q: %w", name, value, err)
		}
		*dst, found = int64(f), found+1
	}
	if err := sc.Err(); err != nil {
		return t, err
	}
	if found < 3 {
		return t, errors.New("metrics: no advertisement counters (a sitebox older than the tree benchmark?)")
	}
	return t, nil
}
