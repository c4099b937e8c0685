package store

import (
	"context"
	"fmt"
	"time"
)

// Endpoint is one server as clients reach it.
type Endpoint struct {
	Root  string // "host:port" of its root:// service; "" if none
	HTTPS string // base URL of its https:// service, "https://host:port"; "" if none
}

func (ep Endpoint) String() string {
	switch {
	case ep.Root != "" && ep.HTTPS != "":
		return "root://" + ep.Root + " " + ep.HTTPS
	case ep.Root != "":
		return "root://" + ep.Root
	}
	return ep.HTTPS
}

// Call is a request a Router (or a Prechecker) is asked about: Op
// ("stat", "open", "checksum", "create", "mv", …) on the clean path
// Path, with the options of a create or the new name of a move.
type Call struct {
	Op, Path string
	Create   CreateOptions
	To       string // the new name of an "mv" (for a Prechecker)
}

// Route is a Router's answer for one Call. The zero Route serves it here;
// To sends the client elsewhere; Retry asks it to come back later. The
// frontends send it as kXR_redirect or kXR_wait on root://, and as 307
// with a Link header or 503 with Retry-After on https://.
type Route struct {
	// To are the servers holding the data, best first: a root:// client
	// goes to the first with a root:// address, an https client to the
	// first with an https one.
	To []Endpoint
	// Opaque is CGI for the target, without '?': "vo=cms&sbx.hops=2".
	Opaque string
	// Retry asks the client to come back after Wait (at least a second):
	// a director whose search is still running.
	Retry  bool
	Wait   time.Duration
	Reason string // for logs: "replica at site B", "VO cms federation"
}

// Here reports whether the call is served by this server.
func (r Route) Here() bool { return len(r.To) == 0 && !r.Retry }

// Describe says what the route does with call, for logs and errors.
func (r Route) Describe(c Call) string {
	switch {
	case r.Retry:
		return fmt.Sprintf("%s %s: retry in %v (%s)", c.Op, c.Path, r.Wait, r.Reason)
	case len(r.To) > 0:
		return fmt.Sprintf("%s %s: redirect to %s (%s)", c.Op, c.Path, r.To[0].String(), r.Reason)
	}
	return c.Op + " " + c.Path + ": served here"
}

// Router is implemented by stores that send clients elsewhere (a
// director). The frontends ask it before a call that may be routed and
// answer a redirect or a wait themselves; an error is the answer to the
// call (not found anywhere, a redirect loop).
type Router interface {
	Route(ctx context.Context, c Call) (Route, error)
}

// RouteOf asks s's Router about c; a store without one serves everything
// here.
func RouteOf(ctx context.Context, s Store, c Call) (Route, error) {
	r, ok := As[Router](s)
	if !ok {
		return Route{}, nil
	}
	return r.Route(ctx, c)
}
