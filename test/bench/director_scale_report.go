package bench

import (
	"fmt"
	"strings"
	"time"
)

// Targets for the director at scale, from issue 37: reported, not
// asserted.
const (
	targetScaleLocateP99   = 5 * time.Millisecond // held file, 1,000 servers
	targetScaleVsCmsd      = 2.0                  // redirects/s ÷ cmsd's largest setup
	targetScaleRSS         = 200 << 20            // bytes, 1,000 servers
	targetScaleKeepUpCount = 10000                // servers whose ads at 10 s are absorbed
)

// FormatDirectorScale renders the report as Markdown.
func FormatDirectorScale(r *DirectorScaleReport) string {
	c := r.Config
	var b strings.Builder
	if c.Tree {
		fmt.Fprintf(&b, "%d simulated data servers in %d sites, each a root:// server on its own 127.0.0.1 port and a federation member approved in its site director's members file, advertising every %s with its own ed25519 key (signed ads, verified by the director; a site's servers share %d keep-alive HTTPS connections; the directors' per-client connection cap is off since all come from 127.0.0.1). A three-level tree of sitebox directors (`sitebox serve`, director role only), each approved as a director member by the one above and advertising to it every %s with the servers below it: %d site directors, %d regional directors of %s sites each, and the top director, which clients ask. Loopback, %d CPUs shared by the %d directors, the simulated servers and the clients.\n\n",
			c.Servers, c.Sites, durText(c.Interval), siteConns, durText(c.Interval), c.Sites, c.Regions, sitesPerRegion(c), r.CPUs, c.Sites+c.Regions+1)
	} else {
		fmt.Fprintf(&b, "%d simulated data servers in %d sites, each a root:// server on its own 127.0.0.1 port and a federation member approved in the director's members file, advertising every %s with its own ed25519 key (signed ads, verified by the director; a site's servers share %d keep-alive HTTPS connections; the director's per-client connection cap is off since all come from 127.0.0.1). One sitebox director (`sitebox serve`, director role only), one level: no regional or site directors. Loopback, %d CPUs shared by the director, the simulated servers and the clients.\n\n",
			c.Servers, c.Sites, durText(c.Interval), siteConns, r.CPUs)
	}

	joined := fmt.Sprintf("all servers usable %s after the first ad", durText(r.Joined.Round(100*time.Millisecond)))
	if r.Usable < c.Servers {
		joined = fmt.Sprintf("only %d of %d servers usable %s after the first ad", r.Usable, c.Servers, durText(r.Joined.Round(time.Second)))
	}
	if c.Tree {
		joined = strings.Replace(joined, "usable", "usable at the top director", 1)
		fmt.Fprintf(&b, "Advertisements: %s; over %s after that, the servers' ads: **%.0f ads/s absorbed** by the site directors of %.0f/s sent (%d refused or failed), ad round trip p50 %s, p99 %s: %s.\n\n",
			joined, durText(c.AdWindow), r.AdsPerSec, r.AdsWanted, r.AdFailures, latText(r.AdP50), latText(r.AdP99), keepsUpText(r))
		fmt.Fprintf(&b, "At the end of that window the top director listed %d of the %d servers as usable.\n\n", r.UsableAfter, c.Servers)
		b.WriteString(formatTreeLevels(r))
	} else {
		fmt.Fprintf(&b, "Advertisements: %s; over %s after that, **%.0f ads/s absorbed** of %.0f/s sent (%d refused or failed), ad round trip p50 %s, p99 %s: %s. The director was busy %.0f%% of one core over that window (%s of CPU per ad absorbed).\n\n",
			joined, durText(c.AdWindow), r.AdsPerSec, r.AdsWanted, r.AdFailures, latText(r.AdP50), latText(r.AdP99), keepsUpText(r), 100*r.AdBusy, latText(r.AdCPU))
	}
	if r.AdFirstError != "" {
		fmt.Fprintf(&b, "First ad failure: %s\n\n", r.AdFirstError)
	}

	if r.LocateSkipped != "" {
		fmt.Fprintf(&b, "Locate and redirects: %s.\n\n%s peak RSS (VmHWM) over the run: %s.\n", r.LocateSkipped, topName(r), rssText(r.PeakRSS))
		b.WriteString(formatScaleTargets(r))
		return b.String()
	}
	b.WriteString(formatScaleLocates(r))
	fmt.Fprintf(&b, "\nRedirects: %d clients, each on its own connection, kXR_open (read) round-robin over %d files held by one server each (located already), %s, redirects counted, not followed; %d rounds, in each the director and then the cmsd baseline, the ads going on throughout. The rows are the median round; the ratio is the median of the rounds' ratios.\n\n",
		c.Clients, c.Files, durText(c.Duration), c.Rounds)
	b.WriteString("| redirector | redirects/s | p50 | p99 | errors | each round, /s |\n|---|---:|---:|---:|---:|---|\n")
	row := func(label string, p DirectorPoint, rounds []DirectorPoint) {
		if p.Err != "" {
			fmt.Fprintf(&b, "| %s | failed: %s | | | | |\n", label, strings.ReplaceAll(p.Err, "|", "/"))
			return
		}
		var each []string
		for _, r := range rounds {
			each = append(each, fmt.Sprintf("%.0f", r.PerSec))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %d | %s |\n", label, p.PerSec, latText(p.P50), latText(p.P99), p.Errors, strings.Join(each, ", "))
	}
	label := fmt.Sprintf("sitebox director, %d servers", c.Servers)
	if c.Tree {
		label = fmt.Sprintf("sitebox top director, %d servers in a tree", c.Servers)
	}
	row(label, r.Redirects, r.RedirectRounds)
	if r.Cmsd != nil {
		row("cmsd manager, 1 real xrootd data server", *r.Cmsd, r.CmsdRounds)
	}
	if r.RedirectCPU > 0 {
		fmt.Fprintf(&b, "\nThe director's CPU time per redirect over its rounds: %s (ads included).\n", latText(r.RedirectCPU))
	}
	b.WriteString("\nA cmsd manager with many data servers is not simulated: that would take a cmsd speaking the cms protocol per server (real xrootd + cmsd pairs, two processes each, do not fit on this machine beyond a handful). The cmsd row, when present, is its largest setup here: one manager, one data server.\n")

	fmt.Fprintf(&b, "\n%s peak RSS (VmHWM) over the run: %s.\n", topName(r), rssText(r.PeakRSS))
	b.WriteString(formatScaleTargets(r))
	return b.String()
}

func topName(r *DirectorScaleReport) string {
	if r.Config.Tree {
		return "Top director"
	}
	return "Director"
}

func keepsUpText(r *DirectorScaleReport) string {
	if r.KeepsUp() {
		return "it keeps up"
	}
	return "it falls behind"
}

// formatScaleTargets lists the targets that apply to this run.
func formatScaleTargets(r *DirectorScaleReport) string {
	var b strings.Builder
	b.WriteString("\nTargets (issue 37), for this run:\n\n")
	mark := func(ok bool) string {
		if ok {
			return "✓"
		}
		return "✗"
	}
	for _, l := range r.Locate {
		if l.Holders == 1 && l.Err == "" {
			fmt.Fprintf(&b, "- locate p99 of a held file ≤ %s (at 1,000 servers): first %s %s, again %s %s\n",
				latText(targetScaleLocateP99), latText(l.ColdP99), mark(l.ColdP99 <= targetScaleLocateP99), latText(l.WarmP99), mark(l.WarmP99 <= targetScaleLocateP99))
		}
	}
	if r.Cmsd != nil && r.Cmsd.Err == "" && r.Redirects.Err == "" && r.Ratio > 0 {
		fmt.Fprintf(&b, "- redirects/s ≥ %.0f× cmsd's largest setup here (one data server), median of the rounds: %s\n",
			targetScaleVsCmsd, verdict(r.Ratio, targetScaleVsCmsd, true, "%.2f×"))
	} else {
		fmt.Fprintf(&b, "- redirects/s ≥ %.0f× cmsd's: not compared (the cmsd baseline did not run)\n", targetScaleVsCmsd)
	}
	fmt.Fprintf(&b, "- %s RSS ≤ %s (at 1,000 servers): %s %s\n", strings.ToLower(topName(r)), rssText(targetScaleRSS), rssText(r.PeakRSS), mark(r.PeakRSS > 0 && r.PeakRSS <= targetScaleRSS))
	fmt.Fprintf(&b, "- ads of %d servers absorbed at a 10 s interval without falling behind: this run, %d servers at %s: %s %s\n",
		targetScaleKeepUpCount, r.Config.Servers, durText(r.Config.Interval), keepsUpText(r), mark(r.KeepsUp()))
	return b.String()
}

// formatScaleLocates is the locate table, with what it measures.
func formatScaleLocates(r *DirectorScaleReport) string {
	c := r.Config
	var b strings.Builder
	first := fmt.Sprintf("the director asks every server that advertises the prefix (%d stats)", c.Servers)
	if !c.NoHoldings {
		first = fmt.Sprintf("each server's ads carry a holdings filter of the files it holds, and the director asks first the servers whose filters may hold the file (the holders and about 1 in 100 of the others); a missing file, which no filter has, it asks of all %d", c.Servers)
	}
	fmt.Fprintf(&b, "Locate: kXR_open (read) on one connection until the director redirects (or says not found), kXR_wait honoured and included. \"First\" is each file's first open, for which %s; \"again\" is %d more opens of each, answered from what it found. %d files per row; the director's first search ever (which connects to every server) took %s and is not in the rows. The director's CPU time per first open is read from /proc around each row's first opens.\n\n",
		first, warmRounds, c.Files, latText(r.FirstSearch))
	if c.Tree {
		b.WriteString("Through the tree, the locates and redirects are asked of the top director: the regional directors' ads have reported every server below them to it, so it asks the servers itself and sends clients straight to them, as a one-level director does; the site and regional directors are not on a client's path.\n\n")
	}
	b.WriteString("| file held by | first p50 | first p99 | director CPU per first open | again p50 | again p99 | waits |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, l := range r.Locate {
		what := fmt.Sprintf("%d server(s)", l.Holders)
		if l.Holders == 0 {
			what = "none (missing)"
		}
		if l.Err != "" {
			fmt.Fprintf(&b, "| %s | failed: %s | | | | | |\n", what, strings.ReplaceAll(l.Err, "|", "/"))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d |\n", what, latText(l.ColdP50), latText(l.ColdP99), latText(l.ColdCPU), latText(l.WarmP50), latText(l.WarmP99), l.Waits)
	}
	return b.String()
}
