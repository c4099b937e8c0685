package krb5auth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"sitebox/internal/store"
)

// ErrRefused is wrapped by every refusal of a client's credentials.
var ErrRefused = errors.New("kerberos authentication refused")

// MaxAPReq bounds a credential: an AP-REQ with a PAC is a few KiB; more
// is refused before it is parsed.
const MaxAPReq = 64 << 10

// Authenticator verifies Kerberos credentials with the box's keytab. It
// is safe for concurrent use; Close releases its replay cache.
type Authenticator struct {
	keytab     *keytab.Keytab
	skew       time.Duration
	principals []string // as configured, "xrootd/host@REALM"
	realms     map[string]*mapper
	replay     *replayCache
	log        *slog.Logger
}

// New loads the keytab and map files of cfg.
func New(cfg Config, log *slog.Logger) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("kerberos: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kt, err := keytab.Load(cfg.Keytab)
	if err != nil {
		return nil, fmt.Errorf("kerberos: keytab %s: %w", cfg.Keytab, err)
	}
	for _, p := range cfg.Principals {
		comps, realm, _ := ParsePrincipal(p)
		if !hasPrincipal(kt, comps, realm) {
			return nil, fmt.Errorf("kerberos: keytab %s has no key for %s (export it with kadmin: ktadd -k <keytab> %s)", cfg.Keytab, p, p)
		}
	}
	skew := cfg.ClockSkew
	if skew <= 0 {
		skew = 5 * time.Minute
	}
	a := &Authenticator{
		keytab:     kt,
		skew:       skew,
		principals: slices.Clone(cfg.Principals),
		realms:     map[string]*mapper{},
		log:        log.With("component", "kerberos"),
	}
	for _, r := range cfg.Realms {
		m, err := newMapper(r)
		if err != nil {
			return nil, fmt.Errorf("kerberos: %w", err)
		}
		a.realms[r.Name] = m
	}
	if a.replay, err = openReplayCache(cfg.ReplayCache, skew, time.Now); err != nil {
		return nil, err
	}
	if a.replay.damage != nil {
		a.log.Warn("kerberos replay cache damaged: started afresh, refusing authenticators made before this start",
			"file", cfg.ReplayCache, "reason", a.replay.damage.Error())
	}
	return a, nil
}

// Close releases the replay cache (its file and lock); credentials are
// refused from then on.
func (a *Authenticator) Close() error { return a.replay.close() }

func hasPrincipal(kt *keytab.Keytab, comps []string, realm string) bool {
	for _, e := range kt.Entries {
		if e.Principal.Realm == realm && slices.Equal(e.Principal.Components, comps) {
			return true
		}
	}
	return false
}

// Principal is the first configured service principal of service
// ("xrootd", "HTTP"), "" if there is none.
func (a *Authenticator) Principal(svc string) string {
	for _, p := range a.principals {
		if comps, _, _ := ParsePrincipal(p); comps[0] == svc {
			return p
		}
	}
	return ""
}

// VerifyAPReq checks a raw Kerberos AP-REQ addressed to one of the
// configured principals of service svc and returns the mapped identity.
// The error says why a credential is refused.
func (a *Authenticator) VerifyAPReq(raw []byte, svc string) (*store.Identity, error) {
	if len(raw) > MaxAPReq {
		return nil, fmt.Errorf("%w: credential of %d bytes is over the %d-byte limit", ErrRefused, len(raw), MaxAPReq)
	}
	var req messages.APReq
	if err := req.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("%w: malformed AP-REQ: %v", ErrRefused, err)
	}
	sname := strings.Join(req.Ticket.SName.NameString, "/") + "@" + req.Ticket.Realm
	if !a.serves(req.Ticket.SName.NameString, req.Ticket.Realm, svc) {
		return nil, fmt.Errorf("%w: ticket is for %s, not a %s principal of this box (%s)", ErrRefused, sname, svc, strings.Join(a.principals, ", "))
	}
	// Verify decrypts the ticket and the authenticator and checks their
	// times and names; no addresses are required (tickets are
	// addressless by default), no PAC is read (groups come from the
	// configuration, never from the ticket).
	ok, err := req.Verify(a.keytab, a.skew, types.HostAddress{}, nil)
	if err != nil || !ok {
		return nil, fmt.Errorf("%w: ticket for %s: %s", ErrRefused, sname, reason(err))
	}
	if err := a.replay.add(authenticatorTag(&req), clientTagOf(req.Authenticator), authenticatorTime(req.Authenticator)); err != nil {
		return nil, fmt.Errorf("%w: ticket for %s: %v", ErrRefused, sname, err)
	}
	id, err := a.identity(req.Authenticator.CName.NameString, req.Authenticator.CRealm, req.Ticket.DecryptedEncPart.EndTime)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return id, nil
}

// reason is a gokrb5 error without its "[Root cause: …]" preamble,
// with a hint for the commonest refusals.
func reason(err error) string {
	if err == nil {
		return "not valid"
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "[Root cause: ") {
		if _, rest, ok := strings.Cut(msg, "] "); ok {
			msg = rest
		}
	}
	switch {
	case strings.Contains(msg, "KRB_AP_ERR_TKT_EXPIRED"):
		msg += " (run kinit again)"
	case strings.Contains(msg, "KRB_AP_ERR_NOKEY"):
		msg += " (the box's keytab lacks the key the KDC used: export the principal's current key to it)"
	}
	return msg
}

func (a *Authenticator) serves(comps []string, realm, svc string) bool {
	for _, p := range a.principals {
		c, r, _ := ParsePrincipal(p)
		if r == realm && slices.Equal(c, comps) && c[0] == svc {
			return true
		}
	}
	return false
}

// identity maps a verified client principal to its local identity.
func (a *Authenticator) identity(comps []string, realm string, expires time.Time) (*store.Identity, error) {
	m, ok := a.realms[realm]
	if !ok {
		return nil, fmt.Errorf("principal %s@%s: realm %s is not mapped on this box", strings.Join(comps, "/"), realm, realm)
	}
	user, err := m.localUser(comps)
	if err != nil {
		return nil, err
	}
	return &store.Identity{
		Subject: user,
		Issuer:  IssuerPrefix + realm,
		Groups:  slices.Clone(m.realm.Groups),
		Scopes:  scopesFor(m.realm.Scopes, user),
		Expires: expires,
	}, nil
}

// VerifyNegotiate checks the value of an "Authorization: Negotiate"
// header (base64 SPNEGO, or a raw Kerberos GSS token) for the HTTP
// service.
func (a *Authenticator) VerifyNegotiate(b64 string) (*store.Identity, error) {
	b64 = strings.TrimSpace(b64)
	if len(b64) > MaxAPReq*4/3+4 {
		return nil, fmt.Errorf("%w: Negotiate token of %d bytes is over the limit", ErrRefused, len(b64))
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: Negotiate token is not base64: %v", ErrRefused, err)
	}
	mech := b
	var st spnego.SPNEGOToken
	if st.Unmarshal(b) == nil {
		if !st.Init || len(st.NegTokenInit.MechTokenBytes) == 0 {
			return nil, fmt.Errorf("%w: SPNEGO token carries no Kerberos mechanism token", ErrRefused)
		}
		mech = st.NegTokenInit.MechTokenBytes
	}
	var k spnego.KRB5Token
	if err := k.Unmarshal(mech); err != nil {
		return nil, fmt.Errorf("%w: not a Kerberos GSS token: %v", ErrRefused, err)
	}
	if !k.IsAPReq() {
		return nil, fmt.Errorf("%w: the Kerberos GSS token is no AP-REQ", ErrRefused)
	}
	raw, err := k.APReq.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REQ: %v", ErrRefused, err)
	}
	return a.VerifyAPReq(raw, "HTTP")
}
