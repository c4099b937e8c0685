package metrics

import (
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"sitebox/internal/store"
)

// Transfers counts what the frontends move — bytes per protocol,
// direction, namespace and VO, open connections — for Prometheus, and
// keeps the busiest files, users and VOs for the dashboard. It is a
// store.TransferObserver. Labels stay bounded: namespaces are the box's
// configured prefixes (else "other"), VOs come from verified tokens only
// (else "none"), never from what a client types.
type Transfers struct {
	bytes *prometheus.CounterVec
	conns *prometheus.GaugeVec
	roots store.PrefixTable[struct{}] // the namespace prefixes bytes are counted under

	mu    sync.Mutex
	total map[string]int64 // "proto/in|out" → bytes, for rates
	files *topCounter
	users *topCounter
	vos   *topCounter
}

var _ store.TransferObserver = (*Transfers)(nil)

// NewTransfers registers the counters with reg; namespaces are the
// prefixes bytes are counted under.
func NewTransfers(reg prometheus.Registerer, namespaces []string) *Transfers {
	t := &Transfers{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "transfer_bytes_total",
			Help: "Bytes moved by the frontends, by protocol, direction (out: to clients, in: from clients), namespace and VO."},
			[]string{"proto", "direction", "namespace", "vo"}),
		conns: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "connections",
			Help: "Open client connections, by protocol."}, []string{"proto"}),
		total: map[string]int64{},
		files: newTopCounter(2000), users: newTopCounter(500), vos: newTopCounter(100),
	}
	for _, ns := range namespaces {
		t.roots.Add(ns, struct{}{})
	}
	reg.MustRegister(t.bytes, t.conns)
	return t
}

// namespaceOf is the configured prefix holding p.
func (t *Transfers) namespaceOf(p string) string {
	if r, _, ok := t.roots.Match(p); ok {
		return r
	}
	return "other"
}

// Transferred counts n bytes.
func (t *Transfers) Transferred(r *store.Request, path string, upload bool, n int64) {
	if n <= 0 {
		return
	}
	dir := "out"
	if upload {
		dir = "in"
	}
	proto := r.Proto
	if proto == "" {
		proto = "other"
	}
	vo, user := "none", "anonymous"
	if r.Identity != nil {
		if vos := r.Identity.VOs(); len(vos) > 0 {
			vo = vos[0]
		}
		// A subject means something only with its issuer: alice of one
		// issuer is not alice of another. How she proved it is said too.
		user = r.Identity.Subject + " (" + r.Identity.Issuer
		if m := r.Identity.Method; m != "" {
			user += ", " + m
		}
		user += ")"
	}
	t.bytes.WithLabelValues(proto, dir, t.namespaceOf(path), vo).Add(float64(n))
	t.mu.Lock()
	t.total[proto+"/"+dir] += n
	t.files.add(path, n)
	t.users.add(user, n)
	t.vos.add(vo, n)
	t.mu.Unlock()
}

// Connections tracks open connections.
func (t *Transfers) Connections(proto string, delta int) {
	t.conns.WithLabelValues(proto).Add(float64(delta))
}

// Totals returns the bytes moved so far by "proto/out" and "proto/in".
func (t *Transfers) Totals() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int64, len(t.total))
	for k, v := range t.total {
		out[k] = v
	}
	return out
}

// TopEntry is a file, user or VO with the bytes it moved.
type TopEntry struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// Top returns the n busiest files, users and VOs since the box started.
func (t *Transfers) Top(n int) (files, users, vos []TopEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.files.top(n), t.users.top(n), t.vos.top(n)
}

// topCounter keeps byte counts per name, bounded: when full, the
// smallest entries are dropped (a busy newcomer still climbs in).
type topCounter struct {
	max    int
	counts map[string]int64
}

func newTopCounter(max int) *topCounter { return &topCounter{max: max, counts: map[string]int64{}} }

func (c *topCounter) add(name string, n int64) {
	if _, ok := c.counts[name]; !ok && len(c.counts) >= c.max {
		c.evict()
	}
	c.counts[name] += n
}

// evict drops the smaller half.
func (c *topCounter) evict() {
	all := c.top(len(c.counts))
	for _, e := range all[len(all)/2:] {
		delete(c.counts, e.Name)
	}
}

func (c *topCounter) top(n int) []TopEntry {
	out := make([]TopEntry, 0, len(c.counts))
	for k, v := range c.counts {
		out = append(out, TopEntry{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return strings.Compare(out[i].Name, out[j].Name) < 0
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
