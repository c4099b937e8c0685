package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/internal/web"
	"sitebox/test/peers"
)

// A box that has moved nothing says so in words in every section,
// rather than showing empty charts or zeros.
func TestDashboardOfAFreshBox(t *testing.T) {
	br := newBrowser(t)
	pool := t.TempDir()
	b := startFedNode(t, "fresh-box", "T3_CH_TEST", "[[export]]\nprefix = \"/store\"\npools = ["+quote(pool)+"]\n")
	dom := br.render(t, dashboardURL(b.box), artifact(t, "dashboard-empty.png"))

	for _, want := range []struct{ id, text string }{
		{"box-name", "fresh-box"},
		{"box-site", "site T3_CH_TEST"},
		{"box-roles", "origin"},
		{"status-text", "live"},
		{"transfers-body", "No transfers yet"},
		{"top-files-body", "No transfers yet"},
		{"top-users-body", "No transfers yet"},
		{"cache-body", "No cache on this box"},
		{"federation-body", "Not a director"},
		{"jobs-body", "No jobs on this box"},
	} {
		if got := textFrom(t, dom, want.id); !strings.Contains(got, want.text) {
			t.Errorf("#%s shows %q; want it to say %q", want.id, got, want.text)
		}
	}
}

// After real transfers through a cache — xrdcp twice (a miss, then a
// hit) and curl, an upload both ways — the cache's page shows the
// rates, the bytes, the files moved (a name with markup in it as text)
// and the hit ratio; the director's page shows the federation tree with
// each server's health and last advertisement, and the jobs it ran.
func TestDashboardShowsTransfersCacheFederationAndJobs(t *testing.T) {
	br := newBrowser(t)
	peers.Require(t, "xrdcp")
	peers.Require(t, "curl")

	dir := startIssuerNode(t, "region-director", "UNIGE", "[director]\nenabled = true\n"+jobsConf(t, []string{"sbxslot9"}, "cpus = 1\n"))
	pool := t.TempDir()
	data := writeRandom(t, filepath.Join(pool, "dash", "events.root"), 6<<20)
	origin := startFedNode(t, "t3-origin", "UNIGE", "[[export]]\nprefix = \"/store\"\npools = ["+quote(pool)+"]\n"+advertiseTo(dir.fedNode, "1s"))
	// The cache's operator is "ops" of the director's issuer.
	cache := startFedNode(t, "t3-cache", "UNIGE", "[cache]\ndir = "+quote(t.TempDir())+"\n"+
		"[[cache.route]]\nprefix = \"/store\"\nupstreams = ["+quote(origin.rootURL)+"]\n"+
		"[[export]]\nprefix = \"/local\"\npools = ["+quote(t.TempDir())+"]\n"+advertiseTo(dir.fedNode, "1s")+
		"[auth]\nca = "+quote(dir.certFile)+"\n[[auth.issuer]]\nurl = "+quote(dir.issuer)+"\n"+
		"[[auth.operator]]\nissuer = "+quote(dir.issuer)+"\nsubject = \"ops\"\n")

	// Jobs on the director box: one succeeds, one fails.
	u := &jobUser{t: t, n: dir, token: dir.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	ids := u.submit("dash.sub", "executable = /bin/sh\narguments = \"-c 'exit $(Process)'\"\nqueue 2\n")

	// Data through the cache in two rate samples (every 5 s): first
	// root:// — a cold read, a warm one, an upload — then https:// — a
	// read and an upload to a name with markup in it.
	out := t.TempDir()
	run(t, false, "xrdcp", "-f", cache.rootURL+"//store/dash/events.root", out+"/cold")
	waitSnapshot(t, cache.box, "the cold read cached", 10*time.Second, func(s web.Snapshot) bool { return s.Cache != nil && s.Cache.UsedBytes >= 6<<20 })
	run(t, false, "xrdcp", "-f", cache.rootURL+"//store/dash/events.root", out+"/warm")
	sameFile(t, out+"/warm", data)
	up := filepath.Join(out, "up.dat")
	os.WriteFile(up, data[:2<<20], 0o644)
	run(t, false, "xrdcp", "-f", up, cache.rootURL+"//local/up.dat")
	first := waitSnapshot(t, cache.box, "a root:// rate sample and a cache hit", 15*time.Second, func(s web.Snapshot) bool {
		return peakRate(s, "root/out") > 0 && s.Cache.HitRatio > 0
	})
	run(t, false, "curl", "-sSf", "--cacert", cache.certFile, "-T", up, cache.httpsURL+"/local/x%3Cb%3Ey.dat")
	run(t, false, "curl", "-sSf", "--cacert", cache.certFile, "-o", out+"/https", cache.httpsURL+"/store/dash/events.root")
	waitSnapshot(t, cache.box, "an https:// rate sample", 15*time.Second, func(s web.Snapshot) bool {
		return len(s.Transfers.Rates.Times) > len(first.Transfers.Rates.Times) && peakRate(s, "https/out") > 0
	})
	// Anonymous: totals and rates, but no file or user names, and the
	// page says how to see them.
	dom := br.render(t, dashboardURL(cache.box), artifact(t, "dashboard-anonymous.png"))
	for _, id := range []string{"top-files-body", "top-users-body", "access-text"} {
		if got := textFrom(t, dom, id); !strings.Contains(got, "hidden") {
			t.Errorf("anonymous #%s shows %q; want it to say names are hidden", id, got)
		}
	}
	if !strings.Contains(textFrom(t, dom, "access-text"), "operator") {
		t.Errorf("the page does not say who sees the names: %q", textFrom(t, dom, "access-text"))
	}
	for _, name := range []string{"events.root", "up.dat", "y.dat"} {
		if strings.Contains(dom, name) {
			t.Errorf("the anonymous page shows %q", name)
		}
	}
	if raw := snapshotAs(t, cache.box, ""); strings.Contains(raw, "events.root") || strings.Contains(raw, `"name":"anonymous"`) || !strings.Contains(raw, `"names_hidden":true`) {
		t.Errorf("anonymous snapshot: %s", tail(raw, 2000))
	}
	// A valid token that is no operator's gets the anonymous view, with
	// the reason the names stay hidden.
	if raw := snapshotAs(t, cache.box, dir.token(t, "alice", "", "")); !strings.HasPrefix(raw, "200 ") || !strings.Contains(raw, `"names_hidden":true`) ||
		!strings.Contains(raw, `not listed in [[auth.operator]]`) || strings.Contains(raw, "events.root") {
		t.Errorf("snapshot with alice's token: %s", tail(raw, 2000))
	}
	// The box logs before it answers, but its log reaches this process
	// through a pipe: wait for the line rather than race it.
	waitFor(t, 10*time.Second, "the non-operator's dashboard token in the log with its subject", func() bool {
		return strings.Contains(cache.proc.Log.String(), "subject=alice")
	})

	// The operator's token, handed to the page in the address fragment
	// (kept in sessionStorage, sent as an Authorization header).
	dom = br.render(t, dashboardURL(cache.box)+"#token="+dir.token(t, "ops", "", ""), artifact(t, "dashboard.png"))
	if got := textFrom(t, dom, "access-text"); !strings.Contains(got, "Names shown to operator ops") {
		t.Errorf("operator page: #access-text %q", got)
	}
	if got := textFrom(t, dom, "top-users-body"); !strings.Contains(got, "anonymous") {
		t.Errorf("operator page: top users %q lack the anonymous clients", got)
	}

	if got := textFrom(t, dom, "box-name"); !strings.HasPrefix(got, "t3-cache") {
		t.Errorf("header names %q; want t3-cache", got)
	}
	if got := textFrom(t, dom, "box-roles"); !strings.Contains(got, "origin cache") {
		t.Errorf("roles %q; want origin and cache", got)
	}
	files := textFrom(t, dom, "top-files-body")
	for _, want := range []string{"/store/dash/events.root", "/local/up.dat", "/local/x&lt;b&gt;y.dat"} {
		if !strings.Contains(files, want) {
			t.Errorf("top files %q lack %q", files, want)
		}
	}
	if strings.Contains(dom, "x<b>y.dat") {
		t.Error("a file name was inserted as markup, not text")
	}
	// 6 MiB three times out (two xrdcp, one curl), 2 MiB twice in.
	if mb := figure(t, textFrom(t, dom, "moved-out"), `Sent to clients ([0-9.]+) MB`); mb < 18 {
		t.Errorf("sent to clients %v MB; want ≥ 18.9", mb)
	}
	if mb := figure(t, textFrom(t, dom, "moved-in"), `Received from clients ([0-9.]+) MB`); mb < 4 {
		t.Errorf("received %v MB; want ≥ 4.2", mb)
	}
	if rate := figure(t, textFrom(t, dom, "rate-out"), `peak ([0-9.]+) [kMG]B/s`); rate <= 0 {
		t.Errorf("peak out rate %v; want > 0", rate)
	}
	if !strings.Contains(dom, "<svg") || !strings.Contains(textFrom(t, dom, "transfers-body"), "root out") {
		t.Error("no rate chart with a root out series")
	}
	ratio := figure(t, textFrom(t, dom, "cache-ratio"), `^([0-9.]+) % hit ratio`)
	if ratio <= 0 || ratio >= 100 {
		t.Errorf("hit ratio %v %%; want between 0 and 100 after a cold and a warm read", ratio)
	}
	if got := textFrom(t, dom, "federation-body"); !strings.Contains(got, "advertises to "+dir.httpsURL) {
		t.Errorf("federation on a non-director: %q", got)
	}

	// The director's page: the tree by site, each server ok with its last
	// advertisement, the jobs, and — after a read through it — its
	// redirect rate and locate latency over time.
	u.wait(ids[0], jobs.Completed, 30*time.Second)
	u.wait(ids[1], jobs.Failed, 30*time.Second)
	waitSnapshot(t, dir.box, "three servers advertised", 10*time.Second, func(s web.Snapshot) bool {
		return s.Federation != nil && len(s.Federation.Servers) == 3
	})
	run(t, false, "xrdcp", "-f", dir.rootURL+"//store/dash/events.root", out+"/via-director")
	sameFile(t, out+"/via-director", data)
	waitSnapshot(t, dir.box, "a redirect and a locate in the director's history", 15*time.Second, func(s web.Snapshot) bool {
		redirects := 0.0
		for k, vals := range s.Federation.Rates.Series {
			for _, v := range vals {
				if strings.HasPrefix(k, "decision/") {
					redirects = max(redirects, v)
				}
			}
		}
		return redirects > 0 && slices.ContainsFunc(s.Federation.Rates.Series["locate/searches"], func(v float64) bool { return v > 0 })
	})
	dom = br.render(t, dashboardURL(dir.box), artifact(t, "dashboard-director.png"))
	for _, chart := range []string{`id="fed-redirects"`, `id="fed-latency"`, `data-series="locate latency"`} {
		if !strings.Contains(dom, chart) {
			t.Errorf("the director's page lacks %s", chart)
		}
	}
	if !regexp.MustCompile(`id="fed-redirects".*?<path[^>]*data-series="(site|cache|replica)"`).MatchString(dom) {
		t.Error("the redirect chart has no line for the redirect made")
	}
	if got := textFrom(t, dom, "fed-latency"); !regexp.MustCompile(`locate latency [0-9.]+ ms`).MatchString(got) {
		t.Errorf("locate latency legend %q", got)
	}
	fed := textFrom(t, dom, "federation-body")
	for _, want := range []string{"region-director", "site UNIGE", "3 servers, all ok", "t3-origin origin ok last ad", "t3-cache origin ok", "t3-cache-cache cache ok", "/store"} {
		if !strings.Contains(fed, want) {
			t.Errorf("federation %q lacks %q", fed, want)
		}
	}
	jobsText := textFrom(t, dom, "jobs-body")
	for _, want := range []string{"local", "completed", "failed", "local users"} {
		if !strings.Contains(jobsText, want) {
			t.Errorf("jobs %q lack %q", jobsText, want)
		}
	}
	if got := textFrom(t, dom, "transfers-body"); !strings.Contains(got, "No transfers yet") {
		t.Errorf("the director moved no data but shows %q", got)
	}
}

// A box whose advertisements fail (here: a director it does not trust)
// says so in red: the status, and one line per failure naming the
// director and the error.
func TestDashboardShowsAdvertisingFailuresInRed(t *testing.T) {
	br := newBrowser(t)
	dir := startFedNode(t, "untrusted-director", "R", "[director]\nenabled = true\n")
	b := startFedNode(t, "lonely-box", "T3", "[[export]]\nprefix = \"/store\"\npools = ["+quote(t.TempDir())+"]\n"+
		"[advertise]\nto = ["+quote(dir.httpsURL)+"]\ninterval = \"500ms\"\n")
	waitSnapshot(t, b.box, "the advertising failure", 10*time.Second, func(s web.Snapshot) bool { return len(s.Box.Problems) > 0 })
	dom := br.render(t, dashboardURL(b.box), artifact(t, "dashboard-failing.png"))
	if !strings.Contains(dom, `id="status" class="status bad"`) {
		t.Errorf("the status is not red: %s", tail(dom, 3000))
	}
	got := textFrom(t, dom, "problems")
	if !strings.Contains(got, "advertising to "+dir.httpsURL+" fails") || !strings.Contains(got, "certificate") {
		t.Errorf("#problems shows %q; want the failing director and the TLS error", got)
	}
	if !regexp.MustCompile(`id="problems"[^>]*>\s*<p class="banner">`).MatchString(dom) {
		t.Error("the failure is not drawn as a red banner")
	}
}
