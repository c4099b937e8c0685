package director

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ApprovalPolicy is what `sitebox federation approve` checks a member's
// endpoints against before recording it and, on a CA director, signing
// its certificate.
type ApprovalPolicy struct {
	// AllowLoopback approves loopback names and addresses, for a test
	// federation on one machine. They are then exempt from the checks
	// against the director's and other members' names too, since every
	// box on the machine shares them (not from the endpoint checks:
	// ports still tell the boxes apart).
	AllowLoopback bool
	// CA: the director certifies the names, so a name that is the
	// director's or another member's is refused (the certificate would
	// let the member pose as that host), as is one outside Constraints.
	CA          bool
	Constraints NameConstraints
	// OwnNames are the director's host names (its certificate's, its
	// configured URLs'); OwnEndpoints its host:port endpoints.
	OwnNames     []string
	OwnEndpoints []string
}

// Check says every reason m may not be approved, nil if it may. others
// are the members already approved (the config's and the file's); one
// of m's name is the record m replaces and is not compared.
func (p ApprovalPolicy) Check(m Member, others []Member) error {
	eps, err := m.endpoints()
	if err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	var errs []string
	add := func(ep endpoint, err error) {
		msg := fmt.Sprintf("%s endpoint: %v", ep.what, err)
		if !slices.Contains(errs, msg) {
			errs = append(errs, msg)
		}
	}
	for _, ep := range eps {
		loopback := false
		switch err := CheckHost(ep.host); {
		case p.AllowLoopback && errors.Is(err, ErrLoopback):
			loopback = true
		case !p.CA && errors.Is(err, ErrUnqualified):
			// Only certificates make a short name everyone's.
		case err != nil:
			add(ep, err)
			continue
		}
		if p.CA {
			if err := p.Constraints.Permits(ep.host); err != nil {
				add(ep, err)
			}
		}
		for _, err := range p.clashes(m.Name, ep, loopback, others) {
			add(ep, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("member %s: %s", m.Name, strings.Join(errs, "; "))
	}
	return nil
}

// clashes are the reasons ep is the director's or another member's.
func (p ApprovalPolicy) clashes(name string, ep endpoint, loopback bool, others []Member) []error {
	var errs []error
	if slices.Contains(p.OwnEndpoints, ep.hostPort) {
		errs = append(errs, fmt.Errorf("%s is this director's own endpoint", ep.hostPort))
	}
	certified := p.CA && !loopback
	if certified && slices.ContainsFunc(p.OwnNames, func(n string) bool { return strings.EqualFold(n, ep.host) }) {
		errs = append(errs, fmt.Errorf("%q is this director's own name: a certificate for it would let the member pose as the director", ep.host))
	}
	for _, o := range others {
		if o.Name == name {
			continue
		}
		oeps, _ := o.endpoints()
		for _, oe := range oeps {
			switch {
			case oe.hostPort == ep.hostPort:
				errs = append(errs, fmt.Errorf("%s is member %s's endpoint", ep.hostPort, o.Name))
			case certified && strings.EqualFold(oe.host, ep.host):
				errs = append(errs, fmt.Errorf("%q is member %s's: a certificate for it would let this member pose as that one", ep.host, o.Name))
			}
		}
	}
	return errs
}

// CheckJoinHosts is what a box can tell of its own endpoints before it
// asks to join: the names no director would approve (err). A loopback
// name, or one of a single label, is approved by some directors (a test
// federation's, one that is no CA): those are not refused here but
// returned as notes, saying which.
func CheckJoinHosts(m Member) (notes []string, err error) {
	eps, err := m.endpoints()
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, ep := range eps {
		switch err := CheckHost(ep.host); {
		case errors.Is(err, ErrLoopback):
			notes = append(notes, err.Error())
		case errors.Is(err, ErrUnqualified):
			notes = append(notes, fmt.Sprintf("%s: a director that is its federation's CA refuses it (set [advertise] %s_url to the host's full name)", err, ep.what))
		case err != nil:
			errs = append(errs, fmt.Sprintf("%s endpoint: %v", ep.what, err))
		}
	}
	if len(errs) > 0 {
		return notes, errors.New(strings.Join(errs, "; "))
	}
	return notes, nil
}

// StaticMembers are the config's [[director.member]] entries as member
// records (entries that are no valid record are left out: the config
// check refuses them).
func (d *Settings) StaticMembers() []Member {
	var out []Member
	for _, m := range d.Members {
		if mem := m.member(); mem.Check() == nil {
			out = append(out, mem)
		}
	}
	return out
}

// member is the record a [[director.member]] entry stands for.
func (m MemberEntry) member() Member {
	return Member{Name: m.Name, Site: m.Site, Key: m.Key, Roles: m.Roles, Prefixes: m.Prefixes,
		Root: EndpointOf(m.Root).Root, HTTPS: strings.TrimSuffix(m.HTTPS, "/")}
}
