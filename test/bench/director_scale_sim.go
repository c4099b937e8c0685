package bench

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/fleet"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	xrdserver "sitebox/internal/xrootd/server"
)

// The scale benchmark's data servers are simulated in this process: each
// is a real root:// server (our xrootd server package on its own
// 127.0.0.1 port) over a store that knows by arithmetic which of the
// benchmark's files it holds, and a real advertiser (fleet.Advertiser
// with director.Signer) sending signed ads as a federation member the
// director's members file approved. Nothing about the director is
// bypassed: it verifies every ad and asks the servers over root:// as it
// would real ones.

// scalePrefix is the namespace every simulated server advertises.
const scalePrefix = "/scale"

// holderClasses are the replica counts the files come in; 0 is a file no
// server holds.
var holderClasses = []int{1, 10, 100, 0}

// scalePath names file k of the class held by n servers.
func scalePath(n, k int) string {
	if n == 0 {
		return fmt.Sprintf("%s/missing/f%d", scalePrefix, k)
	}
	return fmt.Sprintf("%s/h%d/f%d", scalePrefix, n, k)
}

// simStore is server i of total: it holds file k of class n when i is
// among the n servers from k·n on (mod total), so each file has exactly
// min(n, total) holders spread over the sites.
type simStore struct{ i, total int }

func (s simStore) holds(name string) bool {
	dir, file := path.Split(name)
	cls, ok := strings.CutPrefix(strings.TrimSuffix(dir, "/"), scalePrefix+"/h")
	if !ok {
		return false
	}
	n, err1 := strconv.Atoi(cls)
	k, err2 := strconv.Atoi(strings.TrimPrefix(file, "f"))
	if err1 != nil || err2 != nil || n <= 0 || k < 0 || !strings.HasPrefix(file, "f") {
		return false
	}
	return ((s.i-k*n)%s.total+s.total)%s.total < n
}

func (s simStore) Stat(_ context.Context, name string) (store.FileInfo, error) {
	switch {
	case name == scalePrefix || name == "/":
		return store.FileInfo{Name: path.Base(name), Mode: fs.ModeDir | 0o755}, nil
	case s.holds(name):
		return store.FileInfo{Name: path.Base(name), Size: 1, Mode: 0o644, ModTime: time.Unix(0, 0)}, nil
	}
	return store.FileInfo{}, fmt.Errorf("%s: %w", name, store.ErrNotFound)
}

func (s simStore) Open(_ context.Context, name string) (store.File, error) {
	return nil, fmt.Errorf("%s: %w (a simulated server serves no data)", name, store.ErrNotFound)
}

func (s simStore) List(_ context.Context, name string) ([]store.FileInfo, error) {
	return nil, fmt.Errorf("%s: %w", name, store.ErrNotFound)
}

// held lists the benchmark's files (files of each class) s holds, with
// the prefix: what a walk of a real origin's export would find.
func (s simStore) held(files int) []string {
	out := []string{scalePrefix}
	for _, n := range holderClasses {
		for k := range files {
			if p := scalePath(n, k); s.holds(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// simServer is one simulated data server.
type simServer struct {
	member director.Member
	key    ed25519.PrivateKey
	srv    *xrdserver.Server
	ln     net.Listener
	// holdings is its filter (nil: it sends none), sent as a box sends
	// its own.
	holdings *director.Holdings
	send     director.HoldingsSender
}

// simFleet is every simulated server.
type simFleet struct {
	servers []*simServer
	wg      sync.WaitGroup
}

// startSimFleet starts n root:// servers on free 127.0.0.1 ports, spread
// over sites sites, each with its own federation key and, with files > 0,
// a holdings filter of the files it holds among files per class.
func startSimFleet(n, sites, files int) (*simFleet, error) {
	f := &simFleet{}
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.Stop()
			return nil, fmt.Errorf("simulated server %d: %w", i, err)
		}
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			ln.Close()
			f.Stop()
			return nil, err
		}
		s := &simServer{
			member: director.Member{
				Name: fmt.Sprintf("ds%05d", i), Site: siteName(i % sites),
				Key: director.FormatKey(pub), Roles: []string{director.RoleOrigin},
				Prefixes: []string{scalePrefix}, Root: ln.Addr().String(),
			},
			key: priv,
			srv: xrdserver.New(xrdserver.Config{}, simStore{i: i, total: n}, nil),
			ln:  ln,
		}
		if files > 0 {
			s.holdings = director.NewHoldings(simStore{i: i, total: n}.held(files))
		}
		f.servers = append(f.servers, s)
		f.wg.Go(func() { s.srv.Serve(ln) })
	}
	return f, nil
}

// Stop closes every server and waits for them.
func (f *simFleet) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range f.servers {
		s.srv.Shutdown(ctx)
		s.ln.Close()
	}
	f.wg.Wait()
}

// approve records every simulated server in the director's members file
// through the same writer `sitebox federation approve` uses.
func (f *simFleet) approve(membersFile string) error {
	return f.approveSite(-1, 0)(membersFile)
}

// approveSite records the simulated servers of one site (site k of
// sites; k < 0: all of them) in a members file.
func (f *simFleet) approveSite(k, sites int) func(membersFile string) error {
	return func(membersFile string) error {
		var ms []director.Member
		for i, s := range f.servers {
			if k < 0 || i%sites == k {
				ms = append(ms, s.member)
			}
		}
		return approveMembers(membersFile, ms)
	}
}

// approveMembers records members through the same writer `sitebox
// federation approve` uses.
func approveMembers(membersFile string, members []director.Member) error {
	now := time.Now()
	return director.UpdateMembers(membersFile, func(ms []director.Member) ([]director.Member, error) {
		for _, m := range members {
			m.Approved = now
			ms = append(ms, m)
		}
		return ms, nil
	})
}

// adCounter counts the director's answers to advertisements and their
// round-trip times; adCounterShim feeds it from the advertisers' HTTP
// transports.
type adCounter struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	lats       []time.Duration
	firstErr   string
}

func (c *adCounter) record(resp *http.Response, err error, lat time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && resp.StatusCode/100 == 2 {
		c.ok.Add(1)
		c.lats = append(c.lats, lat)
		return
	}
	c.failed.Add(1)
	if c.firstErr == "" {
		if err != nil {
			c.firstErr = err.Error()
		} else {
			c.firstErr = resp.Status
		}
	}
}

// take returns the latencies since the last take, and clears them.
func (c *adCounter) take() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.lats
	c.lats = nil
	return out
}

// siteConns is how many connections a site's servers share to the
// director.
const siteConns = 4

// adTarget is the director a site's servers advertise to.
type adTarget struct{ https, caFile string }

// advertise runs one fleet.Advertiser per simulated server until ctx
// ends, their first ads spread evenly over one interval as boxes started
// at different times would be; server i is at site i mod len(to) and
// advertises to that site's target. Each site's servers share one HTTP
// transport of siteConns keep-alive connections, so a director sees a
// few hundred connections, not one per server (descriptors on one
// machine).
func (f *simFleet) advertise(ctx context.Context, to []adTarget, interval time.Duration, counter *adCounter, wg *sync.WaitGroup) error {
	sites := len(to)
	clients := make([]*http.Client, sites)
	for i := range clients {
		c, err := tlsutil.HTTPClient(to[i].caFile, false, 10*time.Second)
		if err != nil {
			return err
		}
		tr := c.Transport.(*http.Transport)
		tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost = siteConns, siteConns
		c.Transport = &adCounterShim{counter: counter, next: tr}
		clients[i] = c
	}
	step := interval / time.Duration(max(len(f.servers), 1))
	for i, s := range f.servers {
		a := &fleet.Advertiser[director.Ad]{
			To: []string{to[i%sites].https}, Interval: interval, Client: clients[i%sites],
			Signer: &director.Signer{Member: s.member.Name, Key: s.key},
			Log:    slog.New(slog.DiscardHandler),
			Ads: func() []director.Ad {
				return s.send.Prepare([]director.Ad{{
					Name: s.member.Name, Site: s.member.Site, Role: director.RoleOrigin,
					Root: s.member.Root, Prefixes: []string{scalePrefix},
					Free: 1 << 40, Total: 2 << 40, Version: "bench", Interval: interval.Seconds(), Health: "ok",
					Holdings: s.holdings,
				}}, time.Now())
			},
		}
		delay := time.Duration(i) * step
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			a.Run(ctx)
		})
	}
	return nil
}

// adCounterShim is an advertiser transport that reports to the counter.
type adCounterShim struct {
	counter *adCounter
	next    http.RoundTripper
}

func (s *adCounterShim) RoundTrip(r *http.Request) (*http.Response, error) {
	c := s.counter
	t0 := time.Now()
	resp, err := s.next.RoundTrip(r)
	c.record(resp, err, time.Since(t0))
	return resp, err
}
