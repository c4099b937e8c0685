package director

import (
	"fmt"
	"strings"
	"time"

	"sitebox/internal/store"
)

// Failures are not absence. A path whose only possible holders are down
// (a failed probe, missed advertisements) or in planned downtime is not
// "not found": the client is told to wait, as cmsd does, for DownWait
// after the server went away (it may be restarting), and then gets an
// error naming the server. A director that has just started has not
// heard from its members yet, so it answers "wait" instead of "not
// found" for one advertisement interval (StartupWait), or until every
// member has advertised.

// downWaitStep is how long a client is asked to wait at a time.
const downWaitStep = 5 * time.Second

// unavailableHolders are the origins covering name that clients cannot be
// sent to now (down, silent or in downtime), except those already tried.
func (d *Director) unavailableHolders(name string, tried tried, now time.Time) []*Server {
	return d.reg.covering(RoleOrigin, name, func(s *Server) bool {
		return s.Root != "" && !s.usable(now) && !tried.has(s.Root)
	})
}

// unavailableSince is when s stopped being usable: the start of its
// downtime, or when it was found down or silent.
func unavailableSince(s *Server, now time.Time) time.Time {
	if s.Downtime.Active(now) {
		return s.Downtime.Start
	}
	if !s.DownSince.IsZero() {
		return s.DownSince
	}
	if !s.Static && now.After(s.Expires) {
		return s.Expires
	}
	return now
}

// downRoute answers a read of name that no usable server holds while
// some that may hold it are unavailable: wait while the most recent went
// away less than DownWait ago, then an error naming them. ok is false
// when no such server is known.
func (d *Director) downRoute(op, name string, tried tried, now time.Time) (rt store.Route, ok bool, err error) {
	down := d.unavailableHolders(name, tried, now)
	if len(down) == 0 {
		return store.Route{}, false, nil
	}
	var latest time.Time
	names := make([]string, 0, len(down))
	for _, s := range down {
		since := unavailableSince(s, now)
		if since.After(latest) {
			latest = since
		}
		names = append(names, describeDown(s, now))
	}
	if left := latest.Add(d.cfg.DownWait).Sub(now); left > 0 {
		d.stats.count("wait")
		return store.Route{Retry: true, Wait: min(left, downWaitStep).Round(time.Second) + time.Second,
			Reason: "waiting for " + strings.Join(names, ", ")}, true, nil
	}
	d.stats.count("down")
	return store.Route{}, true, &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (%w): no available server has it; %s",
		store.ErrUnavailable, store.ErrDown, strings.Join(names, "; "))}
}

// describeDown says which server is unavailable, why and since when.
func describeDown(s *Server, now time.Time) string {
	since := unavailableSince(s, now).UTC().Format(time.RFC3339)
	switch {
	case s.Downtime.Active(now):
		return fmt.Sprintf("server %s (%s) is in planned downtime since %s (%s)", s.Name, s.Root, since, s.Downtime.Reason)
	case s.Down:
		return fmt.Sprintf("server %s (%s) is down since %s (it does not answer)", s.Name, s.Root, since)
	}
	return fmt.Sprintf("server %s (%s) is down since %s (it stopped advertising)", s.Name, s.Root, since)
}

// starting reports whether the director may still be waiting for its
// members' first advertisements: for StartupWait after it started, unless
// every member has advertised already.
func (d *Director) starting(now time.Time) bool {
	if d.cfg.StartupWait <= 0 || now.Sub(d.started) >= d.cfg.StartupWait {
		return false
	}
	for _, name := range d.members.names() {
		if _, seen := d.server(name); !seen {
			if _, seen := d.server(name + "-cache"); !seen {
				return true
			}
		}
	}
	return false
}

// startupRoute asks a client to come back while the director is starting.
func (d *Director) startupRoute(now time.Time) (store.Route, bool) {
	if !d.starting(now) {
		return store.Route{}, false
	}
	d.stats.count("wait")
	left := d.started.Add(d.cfg.StartupWait).Sub(now)
	return store.Route{Retry: true, Wait: min(left, downWaitStep).Round(time.Second) + time.Second,
		Reason: "director starting: waiting for its servers' advertisements"}, true
}
