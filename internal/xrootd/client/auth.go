package client

import (
	"context"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os/user"
	"slices"
	"strings"
	"sync"

	"sitebox/internal/xrootd/gsi"
	"sitebox/internal/xrootd/proto"
)

// ErrNoAuth is wrapped when a server requires a security protocol this
// client cannot satisfy (no token, no TLS for ztn, no proxy for gsi, no
// Kerberos tickets for krb5, or only protocols it does not speak).
var ErrNoAuth = errors.New("no usable security protocol")

// authenticate answers the security protocols a login response lists
// ("&P=ztn,0:4096:&P=unix"), in the server's order as XrdCl does: ztn
// with the bearer token when there is one and the connection is TLS, unix
// (anonymous) otherwise; gsi with the X.509 proxy when there is one;
// krb5 with the user's Kerberos tickets when Options.Kerberos is set.
// credErr is why Options.Proxy gave none, named if the server needs gsi.
func (c *Conn) authenticate(ctx context.Context, sec string, opts Options, credErr error) error {
	var offered []string
	var lastErr error
	token := opts.CurrentToken()
	for _, p := range strings.Split(sec, "&P=")[1:] {
		name, params, _ := strings.Cut(p, ",")
		offered = append(offered, name)
		var cred []byte
		switch name {
		case "ztn":
			if token == "" || !c.TLS() {
				continue
			}
			limit := ztnMaxToken(params)
			if limit <= 0 || limit > 0xfffe {
				limit = 0xfffe
			}
			if len(token) >= limit {
				lastErr = fmt.Errorf("ztn: token of %d bytes is over the server's %d-byte limit", len(token), limit)
				continue
			}
			cred = ztnCredential(token)
		case "gsi":
			if c.cred == nil {
				continue
			}
			if err := c.gsi(ctx, p, opts); err != nil {
				lastErr = err
				continue
			}
			return nil
		case "krb5":
			if opts.Kerberos == nil {
				continue
			}
			var err error
			if cred, err = krb5Credential(opts.Kerberos, params); err != nil {
				lastErr = err
				continue
			}
		case "unix":
			cred = []byte("unix\x00" + userName() + " " + groupName() + "\x00")
			c.anonNote = anonNote(offered, opts, lastErr, credErr)
		default:
			continue
		}
		var body [16]byte
		copy(body[12:16], name)
		if _, err := c.Do(ctx, proto.ReqAuth, body, cred); err != nil {
			lastErr = fmt.Errorf("%s: %w", name, err)
			continue
		}
		return nil
	}
	if lastErr != nil {
		return fmt.Errorf("authentication failed: %w", lastErr)
	}
	hint := "ztn needs a token and roots://, gsi an X.509 proxy, krb5 Kerberos tickets (kinit)"
	if credErr != nil {
		hint += "; the proxy: " + credErr.Error()
	}
	return fmt.Errorf("%w: the server offers %s (%s)", ErrNoAuth, strings.Join(offered, ", "), hint)
}

// anonNote is why a login goes on anonymously (unix) after the
// protocols before it: a refusal later names it (see FS.try), as XrdCl
// only logs it.
func anonNote(offered []string, opts Options, lastErr, credErr error) string {
	switch {
	case lastErr != nil:
		return lastErr.Error()
	case credErr != nil && slices.Contains(offered, "gsi"):
		return "gsi: no usable proxy: " + credErr.Error()
	case opts.Kerberos == nil && slices.Contains(offered, "krb5"):
		return "krb5: no Kerberos credential cache (run kinit)"
	}
	return ""
}

// gsi runs XRootD's gsi exchange (two kXR_auth rounds, see package
// gsi) with the connection's proxy; offer is the login's "gsi,v:…".
// The server's host certificate must chain to Options.GridRoots and
// name the host dialled.
func (c *Conn) gsi(ctx context.Context, offer string, opts Options) error {
	roots := opts.GridRoots
	if roots == nil {
		var err error
		if roots, err = x509.SystemCertPool(); err != nil {
			return fmt.Errorf("gsi: %w", err)
		}
	}
	host, _, _ := net.SplitHostPort(c.addr)
	// WeakDH: xrootd up to 5.5 agrees the session key on a 512-bit DH
	// group, and XrdCl accepts it. The key only hides the chain in
	// transit (the DN and VOMS attributes, which are not secret); the
	// proxy's private key never leaves the box.
	cl, err := gsi.NewClient(gsi.ClientConfig{Chain: c.cred.Chain, Key: c.cred.Key, Roots: roots, ServerName: host, WeakDH: true})
	if err != nil {
		return err
	}
	step, err := cl.Start(offer)
	if err != nil {
		return err
	}
	st, reply, err := c.authStep(ctx, step)
	if err != nil {
		return fmt.Errorf("gsi: %w", err)
	}
	if st != proto.StatusAuthMore {
		return fmt.Errorf("gsi: the server answered the certificate request with status %d", st)
	}
	if step, err = cl.Continue(reply); err != nil {
		return err
	}
	if _, _, err = c.authStep(ctx, step); err != nil {
		return fmt.Errorf("gsi with the proxy of %s: %w", c.cred.Subject, err)
	}
	return nil
}

// authStep sends one kXR_auth of gsi; kXR_ok and kXR_authmore are
// answers, kXR_error an error.
func (c *Conn) authStep(ctx context.Context, cred []byte) (uint16, []byte, error) {
	var body [16]byte
	copy(body[12:16], "gsi")
	r, err := c.roundTrip(ctx, proto.ReqAuth, body, cred, nil, nil)
	if err != nil {
		return 0, nil, err
	}
	switch r.status {
	case proto.StatusOK, proto.StatusAuthMore:
		return r.status, r.body, nil
	case proto.StatusError:
		return r.status, nil, parseError(r.body)
	}
	return r.status, nil, fmt.Errorf("unexpected response status %d to kXR_auth", r.status)
}

// ztnCredential is the ztn credential: "ztn\0", version 0, 'T', two
// reserved bytes, the big-endian length of the token with its NUL, the
// token and the NUL.
func ztnCredential(tok string) []byte {
	b := make([]byte, 10, 10+len(tok)+1)
	copy(b, "ztn\x00")
	b[5] = 'T'
	binary.BigEndian.PutUint16(b[8:10], uint16(len(tok)+1))
	b = append(b, tok...)
	return append(b, 0)
}

// ztnMaxToken reads the token size limit from ztn's parameters
// ("<opts>:<max>:"), or 0.
func ztnMaxToken(params string) int {
	parts := strings.Split(params, ":")
	if len(parts) < 2 {
		return 0
	}
	var n int
	fmt.Sscanf(parts[1], "%d", &n)
	return n
}

// groupName is the unix credential's group, looked up once (it reads
// the group database) rather than at every connection's login.
var groupName = sync.OnceValue(func() string {
	if u, err := user.Current(); err == nil {
		if g, err := user.LookupGroupId(u.Gid); err == nil {
			return g.Name
		}
	}
	return "sitebox"
})
