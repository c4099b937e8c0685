package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/internal/store"
)

// AnyAudience is the WLCG audience meaning "any service"; it is always
// accepted.
const AnyAudience = "https://wlcg.cern.ch/jwt/v1/any"

// Defaults of VerifierConfig's zero fields.
const (
	DefaultClockSkew    = 60 * time.Second
	DefaultMaxLifetime  = 7 * 24 * time.Hour
	DefaultMaxTokenSize = 16 << 10
	DefaultRefresh      = time.Hour
	DefaultMinRefetch   = 30 * time.Second
	defaultHTTPTimeout  = 10 * time.Second
)

// VerifierConfig says which issuers a Verifier trusts. Zero fields take
// the documented defaults.
type VerifierConfig struct {
	Issuers []IssuerConfig
	// ClockSkew is the tolerance on exp, nbf and iat (default 60 s).
	ClockSkew time.Duration
	// MaxLifetime is the longest validity of a token accepted, from its
	// iat (else nbf) to its exp, and from now to its exp (default 7
	// days: the WLCG profile's default maximum for access tokens is 6 h,
	// but VOs run transfer and pilot workflows with tokens of days).
	MaxLifetime time.Duration
	// MaxTokenSize bounds a token's length in bytes (default 16 KiB);
	// longer tokens are refused before any decoding.
	MaxTokenSize int
	// HTTPClient fetches discovery documents and JWKS (default: a client
	// with a 10 s timeout).
	HTTPClient *http.Client
	// Refresh is how often keys are refetched while the issuer answers
	// (default 1 h).
	Refresh time.Duration
	// MinRefetch is the shortest time between two fetches of one issuer's
	// keys (default 30 s): it paces both retries of an issuer that does
	// not answer and refetches for a token with an unknown kid, so a
	// stream of bad tokens cannot make us hammer the issuer.
	MinRefetch time.Duration

	now func() time.Time // the clock; tests replace it (default time.Now)
}

// IssuerConfig is one trusted token issuer.
type IssuerConfig struct {
	// Issuer is the exact `iss` value, an https URL.
	Issuer string
	// JWKSFile is a local JWKS JSON file holding the issuer's keys; when
	// set nothing is fetched (the file is re-read every Refresh).
	JWKSFile string
	// JWKSURL is where the keys are; default: the jwks_uri of
	// Issuer + "/.well-known/openid-configuration".
	JWKSURL string
	// Audiences are the `aud` values accepted besides AnyAudience. When
	// empty, only tokens that name no audience or AnyAudience pass: a
	// token minted for one service must not be replayable at another
	// unless the operator lists it here. A token without aud is always
	// accepted (its issuer made it valid everywhere on purpose).
	Audiences []string
	// BasePath is where the issuer's scope paths are rooted (default
	// "/"): base /store and storage.read:/cms grant reading /store/cms.
	BasePath string
	// VOs are the virtual organisations this issuer is authoritative for:
	// a group "/cms" or "/cms/production" in its tokens counts only when
	// "cms" is listed. Groups of any other VO are dropped when the token
	// is verified, so a foreign issuer cannot make its users members of
	// a VO it does not speak for. Empty: the issuer asserts no groups.
	VOs []string
}

// Verifier checks bearer tokens against the configured issuers. It is
// safe for concurrent use. Keys are fetched in the background; an issuer
// that does not answer only fails its own tokens.
type Verifier struct {
	cfg     VerifierConfig
	log     *slog.Logger
	issuers map[string]*issuer
	now     func() time.Time

	ctx    context.Context // cancelled by Close; bounds every fetch
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex // protects closed, so no goroutine starts after Close
	closed  bool
	running bool // Run was called
}

// NewVerifier checks cfg, loads JWKS files (an unreadable file is a
// configuration error). Run fetches the keys of URL issuers in the
// background: an issuer that is down at start does not fail this call.
func NewVerifier(cfg VerifierConfig, log *slog.Logger) (*Verifier, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	if cfg.MaxLifetime == 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.MaxTokenSize <= 0 {
		cfg.MaxTokenSize = DefaultMaxTokenSize
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: defaultHTTPTimeout}
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.MinRefetch <= 0 {
		cfg.MinRefetch = DefaultMinRefetch
	}
	if cfg.ClockSkew < 0 {
		return nil, fmt.Errorf("new verifier: negative clock skew %v", cfg.ClockSkew)
	}
	if cfg.MaxLifetime < 0 {
		return nil, fmt.Errorf("new verifier: negative maximum token lifetime %v", cfg.MaxLifetime)
	}
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("new verifier: no issuers configured")
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &Verifier{cfg: cfg, log: log.With("component", "auth"), issuers: map[string]*issuer{},
		now: cfg.now, ctx: ctx, cancel: cancel}
	for _, ic := range cfg.Issuers {
		is, err := newIssuer(v, ic)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("new verifier: %w", err)
		}
		if v.issuers[is.cfg.Issuer] != nil {
			cancel()
			return nil, fmt.Errorf("new verifier: issuer %q configured twice", is.cfg.Issuer)
		}
		v.issuers[is.cfg.Issuer] = is
	}
	for _, is := range v.issuers {
		if is.cfg.JWKSFile != "" {
			keys, err := is.fetch(ctx)
			if err != nil {
				cancel()
				return nil, fmt.Errorf("new verifier: issuer %q: %w", is.cfg.Issuer, err)
			}
			is.keys, is.fetched, is.attempted = keys, v.now(), v.now()
		}
	}
	return v, nil
}

// Run refreshes every issuer's keys in the background until ctx ends or
// the verifier is closed. Without Run, Verify still fetches an issuer's
// keys on demand (and on an unknown kid), but they are not kept fresh.
func (v *Verifier) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(v.ctx, cancel) // Close ends the refreshes too
	defer stop()
	v.mu.Lock()
	running := v.running
	v.running = true
	v.mu.Unlock()
	if running {
		return errors.New("verifier: Run called twice")
	}
	for _, is := range v.issuers {
		if !v.goroutine() {
			break // closed
		}
		go is.run(ctx)
	}
	<-ctx.Done()
	return nil
}

// Close stops the background refreshes and waits for them. Verify keeps
// working on the keys already loaded but no longer fetches.
func (v *Verifier) Close() {
	v.mu.Lock()
	v.closed = true
	v.mu.Unlock()
	v.cancel()
	v.wg.Wait()
}

// goroutine accounts for a goroutine about to start, unless the verifier
// is closed (then it reports false and none may start).
func (v *Verifier) goroutine() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return false
	}
	v.wg.Add(1)
	return true
}

// header is the part of the JOSE header we look at before anything else.
type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// Verify checks raw (the token, without "Bearer ") and returns the
// identity it proves. Every failure is a *Denied naming the reason.
func (v *Verifier) Verify(ctx context.Context, raw string) (*store.Identity, error) {
	// The size check comes first so a 1 MB header costs one comparison.
	if raw == "" {
		return nil, &Denied{Reason: "no token", Cause: store.ErrNoToken}
	}
	if len(raw) > v.cfg.MaxTokenSize {
		return nil, deny("token is %d bytes, over the %d-byte limit", len(raw), v.cfg.MaxTokenSize)
	}
	hdr, err := parseHeader(raw)
	if err != nil {
		return nil, deny("token is malformed: %v", err)
	}
	if hdr.Alg != "RS256" && hdr.Alg != "ES256" {
		return nil, deny("token algorithm %q is not allowed (only RS256, ES256)", hdr.Alg)
	}
	var c claims
	var is *issuer
	keyFunc := func(t *jwt.Token) (any, error) {
		is = v.issuers[c.Issuer]
		if is == nil {
			return nil, deny("token issuer %q is not trusted", c.Issuer)
		}
		return is.key(ctx, hdr.Kid, hdr.Alg)
	}
	p := jwt.NewParser(jwt.WithValidMethods([]string{hdr.Alg}), jwt.WithoutClaimsValidation())
	if _, err := p.ParseWithClaims(raw, &c, keyFunc); err != nil {
		var d *Denied
		switch {
		case errors.As(err, &d):
			return nil, d
		case errors.Is(err, jwt.ErrTokenMalformed):
			return nil, deny("token is malformed: %s", strings.TrimPrefix(err.Error(), jwt.ErrTokenMalformed.Error()+": "))
		case errors.Is(err, jwt.ErrTokenSignatureInvalid):
			return nil, deny("token signature invalid")
		default:
			return nil, deny("token is not acceptable: %v", err)
		}
	}
	id, err := c.identity(is, v.now(), limits{skew: v.cfg.ClockSkew, maxLifetime: v.cfg.MaxLifetime})
	if err != nil {
		return nil, err
	}
	if dropped := is.keepAuthoritativeGroups(id); len(dropped) > 0 {
		// Debug: a user of a multi-VO token is not doing anything wrong,
		// but an operator puzzled by "token has no VO groups" finds why.
		v.log.Debug("token groups ignored: the issuer is not authoritative for their VO",
			"issuer", id.Issuer, "subject", id.Subject, "groups", dropped, "issuer_vos", is.cfg.VOs)
	}
	return id, nil
}

// parseHeader decodes the JOSE header alone, so the algorithm is refused
// before the claims are decoded or a key is looked up.
func parseHeader(raw string) (header, error) {
	var h header
	seg, _, ok := strings.Cut(raw, ".")
	if !ok {
		return h, errors.New("not three dot-separated parts")
	}
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return h, fmt.Errorf("header is not base64url: %w", err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("header is not JSON: %w", err)
	}
	return h, nil
}

// keyFits reports whether key can check a signature made with alg: RS256
// needs an RSA key, ES256 a P-256 one. Checking it ourselves gives a clear
// message instead of a generic signature failure.
func keyFits(key any, alg string) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return alg == "RS256"
	case *ecdsa.PublicKey:
		return alg == "ES256" && k.Curve == elliptic.P256()
	}
	return false
}

// checkIssuerURL requires an absolute https URL without query or fragment.
func checkIssuerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("issuer %q is not a URL: %w", s, err)
	}
	if u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("issuer %q must be an https:// URL without query or fragment", s)
	}
	return nil
}
