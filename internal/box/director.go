package box

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/fleet"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/version"
)

func newDirector(cfg *config.Config, b *Box) (*director.Director, error) {
	c, err := cfg.Director.Config(cfg.Server.Name, cfg.Server.Site, cfg.Server.StateDir)
	if err != nil {
		return nil, err
	}
	return director.New(c, b.log.With("component", "director")), nil
}

// endpointOf turns a root:// or https:// URL into an endpoint.
func endpointOf(raw string) store.Endpoint { return director.EndpointOf(raw) }

// httpsHandler puts the dashboard, the director's API (when the director
// is the box's namespace), the job API and the site issuer's documents
// next to the namespace on the data https:// listener.
func (b *Box) httpsHandler(ns http.Handler) http.Handler {
	mux := http.NewServeMux()
	b.withDashboard(mux)
	mux.Handle("GET "+fleet.ProbePath, fleet.NewProbeHandler())
	if b.director != nil && b.dirStore == nil {
		b.withDirectorAPI(mux)
	}
	if b.jobs != nil {
		h := b.jobsAPI()
		mux.Handle(jobsapi.Prefix, h)
		mux.Handle(jobsapi.Prefix+"/", h)
	}
	b.withIssuer(mux)
	mux.Handle("/", ns)
	return namespaceFirst(mux, ns) // nsmux.go
}

// newAdvertiser announces this box to the directors in [advertise].
func (b *Box) newAdvertiser() (*fleet.Advertiser[director.Ad], error) {
	a := b.cfg.Advertise
	if len(a.To) == 0 {
		return nil, nil
	}
	a.Defaults()
	interval := a.Interval.D()
	client, err := tlsutil.HTTPClient(advertiseCA(b.cfg), a.Insecure, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("advertise.ca: %w", err)
	}
	b.prober = b.newProber(client)
	// Directors accept only ads signed with a key their operator approved
	// (`sitebox federation join` prints the request with this key).
	key, err := director.LoadOrCreateKey(director.KeyFile(b.cfg.Server.StateDir))
	if err != nil {
		return nil, fmt.Errorf("advertise: %w", err)
	}
	return &fleet.Advertiser[director.Ad]{
		To: a.To, Interval: interval, Client: client,
		Signer: &director.Signer{Member: b.cfg.Server.Name, Key: key},
		Log:    b.log.With("component", "advertise"),
		Ads:    func() []director.Ad { return b.ads(interval) },
	}, nil
}

// ads are what this box tells the directors in [advertise]: a box with
// a director sends its director's ad alone, whose servers below include
// the box's own origin and cache (they advertise to it in process);
// otherwise one ad per data role.
func (b *Box) ads(interval time.Duration) []director.Ad {
	var out []director.Ad
	if b.director != nil {
		ad := b.baseAd(interval)
		ad.Root, ad.HTTPS = b.directorEndpoints()
		ad.Role = director.RoleDirector
		ad.Servers = b.director.AdvertisedServers()
		ad.Prefixes = belowPrefixes(ad.Servers)
		out = append(out, ad)
	} else {
		out = b.dataAds(interval)
	}
	if len(out) > 0 {
		out[0].Probes = b.prober.Recent() // once per box, not per role
	}
	return b.sendHold.Prepare(out, time.Now())
}

// belowPrefixes are the prefixes of the servers below a director, each
// once, in the order first met: a regional director's thousand servers
// exporting one prefix make one prefix in its ad, not a thousand copies.
// It runs for every ad, over up to thousands of servers, each with
// prefixes of its own: a set, not a search of the list for each.
func belowPrefixes(servers []director.Ad) []string {
	var out []string
	seen := map[string]struct{}{}
	for _, s := range servers {
		for _, p := range s.Prefixes {
			if _, ok := seen[p]; !ok {
				seen[p] = struct{}{}
				out = append(out, p)
			}
		}
	}
	return out
}

// baseAd is what every ad of the box says, endpoints aside.
func (b *Box) baseAd(interval time.Duration) director.Ad {
	return director.Ad{Name: b.cfg.Server.Name, Site: b.cfg.Server.Site, Load: loadPerCPU(), Version: version.String(),
		ConfigDigest: *b.digest.Load(), Health: b.health(), Downtime: b.currentDowntime(), Interval: interval.Seconds()}
}

// dataAds describe the box's origin and cache, at its data listeners.
func (b *Box) dataAds(interval time.Duration) []director.Ad {
	base := b.baseAd(interval)
	base.Root, base.HTTPS = b.publicEndpoints()
	var out []director.Ad
	if len(b.cfg.Exports) > 0 {
		ad := base
		ad.Role = director.RoleOrigin
		ad.Holdings = b.holdings.Load()
		if b.director != nil {
			// Upstream, the box's own name is its director's entry.
			ad.Name += "-origin"
		}
		for _, e := range b.cfg.Exports {
			ad.Prefixes = append(ad.Prefixes, e.Prefix)
			if len(e.Pools) > 0 {
				t, f := diskSpace(e.Pools[0])
				ad.Total += t
				ad.Free += f
			}
		}
		out = append(out, ad)
	}
	if b.cache != nil {
		ad := base
		ad.Role = director.RoleCache
		if len(out) > 0 || b.director != nil {
			ad.Name += "-cache" // one name per registry entry
		}
		ad.Prefixes = b.cache.Prefixes()
		st := b.cache.Stats()
		ad.Total, ad.Free = st.DiskTotal, st.DiskFree
		out = append(out, ad)
	}
	return out
}

// health is the box's word on itself for its directors.
func (b *Box) health() string {
	if b.cache != nil {
		if e := b.cache.Stats().DiskError; e != "" {
			return "cache disk: " + e
		}
	}
	return "ok"
}

// setDigest records the digest of the config in force.
func (b *Box) setDigest(cfg *config.Config) {
	d := configDigest(cfg)
	b.digest.Store(&d)
}

// configDigest identifies a configuration: the same settings give the
// same digest on every box.
func configDigest(cfg *config.Config) string {
	b, _ := json.Marshal(cfg)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// publicEndpoints are the addresses clients should use for the box's
// data listeners: [advertise]'s URLs, else the listeners with a wildcard
// host replaced by the hostname.
func (b *Box) publicEndpoints() (root, https string) {
	a := b.cfg.Advertise
	return b.data.public(a.RootURL, a.HTTPSURL)
}

// public are a set's endpoints: the URLs given, else its listeners.
func (fe *frontends) public(rootURL, httpsURL string) (root, https string) {
	if rootURL != "" {
		root = endpointOf(rootURL).Root
	} else if fe.rootLn != nil {
		root = publicAddr(fe.rootLn.Addr())
	}
	if httpsURL != "" {
		https = strings.TrimSuffix(httpsURL, "/")
	} else if fe.httpsLn != nil {
		scheme := "https://"
		if fe.https.TLSConfig == nil {
			scheme = "http://"
		}
		https = scheme + publicAddr(fe.httpsLn.Addr())
	}
	return root, https
}

func publicAddr(a net.Addr) string {
	host, port, _ := net.SplitHostPort(a.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host, _ = os.Hostname()
	}
	return net.JoinHostPort(host, port)
}

func diskSpace(dir string) (total, free int64) {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0, 0
	}
	return int64(st.Blocks) * st.Bsize, int64(st.Bavail) * st.Bsize
}

// loadPerCPU is the 1-minute load average divided by the CPUs.
func loadPerCPU() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(data) + " 0")[0], 64)
	return f / float64(runtime.NumCPU())
}
