package director

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/fleet"
)

// Bounds on what one advertisement may cost the director. A regional
// director with a thousand servers below a child is far beyond any
// sitebox federation; the body bound is checked before anything is
// decoded.
const (
	MaxAdBytes  = 1 << 20 // body
	MaxChildren = 1000    // servers reported by a child director, all levels
	MaxProbes   = 256     // throughput probes in one ad
	maxNameLen  = 253     // a DNS name
	// MinInterval and MaxInterval clamp the interval an ad announces,
	// which sets how long its entry lives without the next one.
	MinInterval = 100 * time.Millisecond
	MaxInterval = 5 * time.Minute
)

// refusal is an advertisement refused, with the HTTP status to answer.
type refusal struct {
	code int
	msg  string
}

func refuse(code int, format string, args ...any) *refusal {
	return &refusal{code: code, msg: fmt.Sprintf(format, args...)}
}

// serveAdvertise verifies a signed advertisement and records it. The
// cheap checks come first: an unknown or unsigned sender is refused
// before its body is read, a body is bounded before it is decoded, and
// its signature is checked before anything in it is believed.
func (d *Director) serveAdvertise(w http.ResponseWriter, r *http.Request) {
	member, ad, rf := d.verifyAd(w, r)
	var outside []string
	if rf == nil {
		rf, outside = d.authorize(member, &ad)
	}
	var skipped []string
	if rf == nil {
		var err error
		if skipped, err = d.accept(member.Name, ad); err != nil {
			rf = refuse(http.StatusForbidden, "%v", err)
			if errors.Is(err, errFull) {
				rf.code = http.StatusServiceUnavailable
			}
		}
	}
	d.stats.advertised(rf == nil, 1+len(ad.Servers)-len(skipped))
	if rf != nil {
		who := abbrev(r.Header.Get(HeaderMember), 64) // the sender's choice: bounded in the log and its keys
		d.refusals.log(d.log, who+"\x00"+rf.msg, "advertisement refused", "member", who, "from", r.RemoteAddr, "status", rf.code, "reason", rf.msg)
		http.Error(w, "advertisement refused: "+rf.msg, rf.code)
		return
	}
	if len(outside) > 0 {
		d.refusals.log(d.log, member.Name+"\x00outside\x00"+strings.Join(outside, ","), "child director's servers outside its grant not taken", "member", member.Name, "servers", abbrevList(outside, 10), "granted", member.Prefixes)
	}
	if len(skipped) > 0 {
		d.refusals.log(d.log, member.Name+"\x00skipped\x00"+strings.Join(skipped, ","), "child director's servers not taken", "member", member.Name, "servers", abbrevList(skipped, 10),
			"reason", "a static server, another member's name, another director's server, or the registry is full")
	}
	if root := d.Root(); root != "" {
		w.Header().Set(fleet.HeaderDirectorRoot, root)
	}
	w.WriteHeader(http.StatusNoContent)
}

// verifyAd authenticates the request: a known member, a fresh sequence,
// a body within bounds, a valid signature; then decodes the ad.
func (d *Director) verifyAd(w http.ResponseWriter, r *http.Request) (Member, Ad, *refusal) {
	name, seqText, sig64 := r.Header.Get(HeaderMember), r.Header.Get(HeaderSeq), r.Header.Get(HeaderSignature)
	if name == "" || seqText == "" || sig64 == "" {
		return Member{}, Ad{}, refuse(http.StatusUnauthorized, "not signed: only approved members may advertise (`sitebox federation join` on the box, then `sitebox federation approve` by this director's operator)")
	}
	d.reloadMembers(time.Now())
	member, key, ok := d.members.get(name)
	if !ok {
		return Member{}, Ad{}, refuse(http.StatusUnauthorized, "%q is not a member of this federation: its operator must approve the box's `sitebox federation join` request", abbrev(name, 64))
	}
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil {
		return Member{}, Ad{}, refuse(http.StatusUnauthorized, "%s header %q is not a number", HeaderSeq, abbrev(seqText, 32))
	}
	if skew := time.Since(time.Unix(0, seq)); skew > MaxClockSkew || skew < -MaxClockSkew {
		return Member{}, Ad{}, refuse(http.StatusUnauthorized, "signed about %s from this director's clock (at most %s): a replay, or a clock to fix", skew.Round(time.Minute), MaxClockSkew)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxAdBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return Member{}, Ad{}, refuse(http.StatusRequestEntityTooLarge, "body larger than %d bytes", MaxAdBytes)
		}
		return Member{}, Ad{}, refuse(http.StatusBadRequest, "reading body: %v", err)
	}
	sig, err := base64.StdEncoding.DecodeString(sig64)
	if err != nil || !ed25519.Verify(key, adMessage(name, seq, body), sig) {
		return Member{}, Ad{}, refuse(http.StatusUnauthorized, "signature does not verify with the key approved for %q", name)
	}
	if last, ok := d.members.advance(name, seq); !ok {
		// No numbers in the reply: a box logs each new reply text.
		d.log.Debug("replayed advertisement", "member", name, "seq", seq, "last", last)
		return Member{}, Ad{}, refuse(http.StatusUnauthorized, "replayed or out of order: not signed after the last advertisement accepted from %q (a box whose clock stepped back is accepted again once its clock passes that time)", name)
	}
	var ad Ad
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ad); err != nil {
		return Member{}, Ad{}, refuse(http.StatusBadRequest, "not an advertisement: %v", err)
	}
	if err := checkAd(ad); err != nil {
		return Member{}, Ad{}, refuse(http.StatusBadRequest, "%v", err)
	}
	return member, ad, nil
}

// authorize checks the ad claims only what the member was granted, and
// bounds it. A director's own prefixes and servers below it are narrowed
// to its grant (a child's registry changes without its operator; one
// stray server there must not cut the whole region off); anything else
// outside the grant refuses the ad.
func (d *Director) authorize(m Member, ad *Ad) (rf *refusal, outside []string) {
	if !nameOf(m, ad.Name) {
		return refuse(http.StatusForbidden, "%q may advertise only as %s, not %q", m.Name, strings.Join(m.names(), " or "), ad.Name), nil
	}
	if !m.hasRole(ad.Role) {
		return refuse(http.StatusForbidden, "%q is approved as %s, not %s", m.Name, strings.Join(m.Roles, ", "), ad.Role), nil
	}
	if m.Site != "" && ad.Site != m.Site {
		return refuse(http.StatusForbidden, "%q is approved for site %q, not %q", m.Name, m.Site, ad.Site), nil
	}
	if ad.Root != m.Root || ad.HTTPS != m.HTTPS {
		return refuse(http.StatusForbidden, "endpoints root %q https %q are not those approved for %q (root %q https %q)", ad.Root, ad.HTTPS, m.Name, m.Root, m.HTTPS), nil
	}
	if len(ad.Probes) > MaxProbes {
		return refuse(http.StatusRequestEntityTooLarge, "%d probes (at most %d)", len(ad.Probes), MaxProbes), nil
	}
	secs := ad.Interval
	ad.Interval = min(max(secs, MinInterval.Seconds()), MaxInterval.Seconds())
	if ad.Role != RoleDirector {
		if len(ad.Servers) > 0 {
			return refuse(http.StatusForbidden, "only a director reports servers below it, not a %s", ad.Role), nil
		}
		for _, p := range ad.Prefixes {
			if !m.grants(p) {
				return refuse(http.StatusForbidden, "prefix %q is not granted to %q (granted: %s)", p, m.Name, strings.Join(m.Prefixes, ", ")), nil
			}
		}
		return nil, outside
	}
	ad.Prefixes = keepGranted(m, ad.Prefixes)
	below := flatten(ad.Servers)
	if len(below) > MaxChildren {
		return refuse(http.StatusRequestEntityTooLarge, "%d servers below the director (at most %d)", len(below), MaxChildren), nil
	}
	ad.Servers = nil
	for _, c := range below {
		if c.Holdings.check() != nil {
			c.Holdings = nil // a bad filter costs the server its filter, not its place
		}
		if err := checkAd(c); err != nil || c.Role == RoleDirector || len(c.Prefixes) == 0 {
			continue // a child director's own entry adds nothing: its servers are here
		}
		kept := keepGranted(m, c.Prefixes)
		if len(kept) < len(c.Prefixes) {
			outside = append(outside, c.Name)
		}
		if c.Prefixes = kept; len(kept) > 0 {
			c.Interval, c.Probes = 0, nil
			ad.Servers = append(ad.Servers, c)
		}
	}
	return nil, outside
}

func nameOf(m Member, name string) bool {
	for _, n := range m.names() {
		if n == name {
			return true
		}
	}
	return false
}

// keepGranted returns the prefixes within the member's grant.
func keepGranted(m Member, prefixes []string) []string {
	var out []string
	for _, p := range prefixes {
		if m.grants(p) {
			out = append(out, p)
		}
	}
	return out
}

func abbrevList(names []string, n int) string {
	if len(names) > n {
		return strings.Join(names[:n], ",") + fmt.Sprintf(",… (%d in all)", len(names))
	}
	return strings.Join(names, ",")
}
