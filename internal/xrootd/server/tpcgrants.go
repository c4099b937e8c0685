package server

import (
	"sync"
	"time"

	"sitebox/internal/clientnet"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// The source side of a root:// third-party copy keeps grants: the client
// opened a file for reading with tpc.key=K&tpc.dst=D, and the destination
// D may now open that file with tpc.key=K, once, within tpcTTL, as the
// client. As in XRootD (XrdOfsTPCAuth), a grant
//
//   - is made only by an open that succeeded: the client may read the
//     file, and it exists;
//   - lives while the client keeps that file open, and at most tpcTTL;
//   - is consumed by the destination's open (a second open with the same
//     key is refused).
//
// Each client address and network may hold only a few at once, so no
// client can fill the table that every copy from this server needs.

// tpcTTL is how long a source keeps a grant (XRootD's default is 15 s;
// the destination normally comes within milliseconds).
const tpcTTL = 30 * time.Second

// maxTPCGrants bounds the grants alive at once.
const maxTPCGrants = 4096

// maxTPCGrantsPerClient and maxTPCGrantsPerNetwork bound the grants one
// client address and one client network (IPv4 /24, IPv6 /64) hold at
// once: a client makes one per copy and it is consumed within
// milliseconds, so even a busy transfer service needs few at a time.
const (
	maxTPCGrantsPerClient  = 64
	maxTPCGrantsPerNetwork = 256
)

// tpcSweepEvery is how often adding a grant also drops the expired ones.
const tpcSweepEvery = time.Second

// tpcGrants are the source side's grants. The zero value is ready.
type tpcGrants struct {
	mu        sync.Mutex
	m         map[string]*tpcGrant // by key
	byAddress map[string]int
	byNetwork map[string]int
	swept     time.Time
}

type tpcGrant struct {
	// who is the granting client's identity (its token), nil if
	// anonymous: the destination reads with it, as XRootD lets a
	// destination read what the client could.
	who     *store.Identity
	path    string
	org     string // user.pid of the client that made it
	dst     string // the destination host as the client named it
	expires time.Time
	// addr is the granting client's address, for the per-client limits.
	addr string
}

// add makes the grant gr under key, or says why not: the key is in use,
// or a limit (the client's address's, its network's, the table's) is
// reached. Expired grants are dropped first.
func (g *tpcGrants) add(key string, gr *tpcGrant) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m, g.byAddress, g.byNetwork = map[string]*tpcGrant{}, map[string]int{}, map[string]int{}
	}
	now := time.Now()
	if now.Sub(g.swept) >= tpcSweepEvery || len(g.m) >= maxTPCGrants {
		g.sweep(now)
	}
	if old := g.m[key]; old != nil {
		return errorf(proto.ErrArgInvalid, "open %s: tpc.key is already granted; each copy needs a key of its own", gr.path)
	}
	network := clientnet.Of(gr.addr)
	var refused *limitError
	switch {
	case g.byAddress[gr.addr] >= maxTPCGrantsPerClient:
		refused = &limitError{whatGrants, fromAddress(gr.addr), maxTPCGrantsPerClient}
	case g.byNetwork[network] >= maxTPCGrantsPerNetwork:
		refused = &limitError{whatGrants, limitScope{scopeNetwork, network}, maxTPCGrantsPerNetwork}
	case len(g.m) >= maxTPCGrants:
		refused = &limitError{whatGrants, onServer, maxTPCGrants}
	}
	if refused != nil {
		return &grantRefusal{path: gr.path, limitError: refused}
	}
	g.m[key] = gr
	g.byAddress[gr.addr]++
	g.byNetwork[network]++
	return nil
}

// grantRefusal is a grant refused past a limit, naming the file.
type grantRefusal struct {
	path string
	*limitError
}

func (e *grantRefusal) Error() string { return "open " + e.path + ": " + e.limitError.Error() }
func (e *grantRefusal) Unwrap() error { return e.limitError }

// lookup returns the live grant under key, nil if there is none.
func (g *tpcGrants) lookup(key string) *tpcGrant {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr := g.m[key]
	if gr != nil && time.Now().After(gr.expires) {
		g.remove(key, gr)
		return nil
	}
	return gr
}

// take consumes the grant gr under key and reports whether it was still
// there: of two opens presenting the same grant, one gets it.
func (g *tpcGrants) take(key string, gr *tpcGrant) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m[key] != gr || time.Now().After(gr.expires) {
		return false
	}
	g.remove(key, gr)
	return true
}

// withdraw drops the grant gr under key if it is still there: the client
// closed the file it granted.
func (g *tpcGrants) withdraw(key string, gr *tpcGrant) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m[key] == gr {
		g.remove(key, gr)
	}
}

// count returns how many grants are alive or not yet swept.
func (g *tpcGrants) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.m)
}

// sweep drops the expired grants. g.mu is held.
func (g *tpcGrants) sweep(now time.Time) {
	g.swept = now
	for k, gr := range g.m {
		if now.After(gr.expires) {
			g.remove(k, gr)
		}
	}
}

// remove drops the grant gr under key. g.mu is held.
func (g *tpcGrants) remove(key string, gr *tpcGrant) {
	delete(g.m, key)
	network := clientnet.Of(gr.addr)
	if g.byAddress[gr.addr]--; g.byAddress[gr.addr] <= 0 {
		delete(g.byAddress, gr.addr)
	}
	if g.byNetwork[network]--; g.byNetwork[network] <= 0 {
		delete(g.byNetwork, network)
	}
}

// dropGrant ends the third-party copy grant the file's open made, if
// any: a destination can no longer start a copy of the file once the
// client closed it. Called once the file is out of the table.
func (f *openFile) dropGrant() {
	if f.withdraw != nil {
		f.withdraw()
		f.withdraw = nil
	}
}
