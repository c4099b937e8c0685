package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os/user"
	"strings"
	"sync"

	"sitebox/internal/xrootd/proto"
)

// ErrNoAuth is wrapped when a server requires a security protocol this
// client cannot satisfy (no token, no TLS for ztn, or only protocols such
// as gsi that we do not speak).
var ErrNoAuth = errors.New("no usable security protocol")

// authenticate answers the security protocols a login response lists
// ("&P=ztn,0:4096:&P=unix"), in the server's order as XrdCl does: ztn
// with the bearer token when there is one and the connection is TLS, unix
// (anonymous) otherwise.
func (c *Conn) authenticate(ctx context.Context, sec string, opts Options) error {
	var offered []string
	var lastErr error
	token := opts.token()
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
		case "unix":
			cred = []byte("unix\x00" + userName() + " " + groupName() + "\x00")
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
	return fmt.Errorf("%w: the server offers %s (ztn needs a token and roots://)", ErrNoAuth, strings.Join(offered, ", "))
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
