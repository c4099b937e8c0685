package director

import (
	"fmt"
	"net"
	"slices"
	"time"

	"sitebox/internal/store"
)

// Advertise records an advertisement the caller trusts, as from a
// member of the ad's name (for tests and in-process use). Ads from the
// network go through the HTTP API, which verifies them first.
func (d *Director) Advertise(ad Ad) error {
	if err := checkAd(ad); err != nil {
		return err
	}
	_, err := d.accept(ad.Name, ad)
	return err
}

// checkAd refuses a malformed advertisement.
func checkAd(ad Ad) error {
	if ad.Name == "" || (ad.Root == "" && ad.HTTPS == "") {
		return fmt.Errorf("%w: an advertisement needs a name and at least one endpoint", store.ErrInvalid)
	}
	if len(ad.Name) > maxNameLen {
		return fmt.Errorf("%w: name is %d bytes (at most %d)", store.ErrInvalid, len(ad.Name), maxNameLen)
	}
	switch ad.Role {
	case RoleOrigin, RoleCache, RoleDirector:
	default:
		return fmt.Errorf("%w: role %q is not origin, cache or director", store.ErrInvalid, ad.Role)
	}
	for _, p := range ad.Prefixes {
		if c, err := store.CleanPath(p); err != nil || c != p {
			return fmt.Errorf("%w: prefix %q is not a clean namespace path", store.ErrInvalid, p)
		}
	}
	if err := ad.Holdings.check(); err != nil {
		return fmt.Errorf("server %q: %w", abbrev(ad.Name, 64), err)
	}
	return nil
}

// accept records a checked advertisement from member; children the
// registry would not take are returned.
func (d *Director) accept(member string, ad Ad) (skipped []string, err error) {
	_, known := d.server(ad.Name)
	probes := ad.Probes
	below := flatten(ad.Servers)
	if skipped, err = d.reg.advertise(ad, time.Now(), member, d.members.owner); err != nil {
		return nil, err
	}
	if len(probes) > 0 {
		d.matrix.Record(ad.Name, probes)
	}
	var names []Ad
	for _, a := range append([]Ad{ad}, below...) {
		switch {
		case a.Role == RoleDirector || slices.Contains(skipped, a.Name):
		case net.ParseIP(hostOf(a.Root)) != nil:
			d.sites.note(a.Site, hostOf(a.Root))
		default:
			names = append(names, a)
		}
	}
	// Host names are resolved by one goroutine at a time, so an ad never
	// waits on DNS and many ads never start many lookups; names missed
	// while it runs are noted with a later ad.
	if len(names) > 0 && d.resolving.CompareAndSwap(false, true) {
		go func() {
			defer d.resolving.Store(false)
			for _, a := range names {
				d.sites.note(a.Site, hostOf(a.Root))
			}
		}()
	}
	if !known {
		d.log.Info("server joined", "name", ad.Name, "member", member, "site", ad.Site, "role", ad.Role, "root", ad.Root, "prefixes", ad.Prefixes, "servers_below", len(below)-len(skipped))
	}
	return skipped, nil
}

// reloadMembers picks up approvals and revocations from the members
// file; a revoked (or changed) member's servers are dropped at once.
func (d *Director) reloadMembers(now time.Time) {
	gone, loadErr := d.members.reload(now)
	if loadErr != "" {
		d.log.Error("cannot read the members file; keeping the members known before", "err", loadErr)
	}
	for _, m := range gone {
		dropped := d.reg.dropMember(m)
		d.log.Warn("member revoked or changed: its servers are dropped until it advertises within its new grant", "member", m, "dropped", dropped)
	}
}

// SetMembers replaces the members of the director's config
// ([[director.member]]) while it runs, for a reload of the box's config;
// the servers of a member removed or changed are dropped at once, as for
// a revocation. The members file is read again at the next look.
func (d *Director) SetMembers(static []Member) {
	for _, m := range d.members.setStatic(static) {
		dropped := d.reg.dropMember(m)
		d.log.Warn("member removed or changed in the config: its servers are dropped until it advertises within its new grant", "member", m, "dropped", dropped)
	}
	d.reloadMembers(time.Now())
}
