package bench

import (
	"fmt"
	"strings"
	"time"
)

// Targets for the sitebox director, from the issue: reported, not
// asserted.
const (
	targetRedirectsVsCmsd = 1.5                  // sitebox redirects/s ÷ the cmsd manager's
	targetAddedLatency    = 1 * time.Millisecond // p50 open→redirect − p50 direct stat, one client
)

// find returns the point for setup at n clients, if it ran.
func (r *DirectorReport) find(setup string, n int) (DirectorPoint, bool) {
	for _, p := range r.Points {
		if p.Setup == setup && p.Clients == n && p.Err == "" {
			return p, true
		}
	}
	return DirectorPoint{}, false
}

// FormatDirector renders the report as Markdown: the conditions, one row
// per setup and client count, the added latency of one redirect, the
// targets and the redirectors' memory.
func FormatDirector(r *DirectorReport) string {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "Data server: real xrootd on %s holding %d files; its cmsd subscribed to the cmsd manager (xrootd + cmsd, all.role manager). The sitebox director lists it as a static server.\n", r.DataServer, c.Files)
	fmt.Fprintf(&b, "Load: each client on its own connection (handshake, kXR_protocol, kXR_login), one kXR_open (read) at a time for the files round-robin; the kXR_redirect is counted, not followed; kXR_wait is retried after the wait. %s per point after a warm-up opening every file once; who goes first alternates per client count. Loopback, %d CPUs shared by clients and servers.\n\n",
		durText(c.Duration), r.CPUs)

	b.WriteString("| setup | clients | redirects/s | sitebox ÷ cmsd | p50 | p99 | waits | errors |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var errs []string
	row := func(p DirectorPoint, label string) {
		if p.Err != "" {
			fmt.Fprintf(&b, "| %s | %d | failed | | | | | |\n", label, p.Clients)
			errs = append(errs, fmt.Sprintf("%s, %d clients: %s", label, p.Clients, p.Err))
			return
		}
		vs := ""
		if x, ok := r.find("cmsd", p.Clients); ok && p.Setup == "sitebox" {
			vs = ratio(p.PerSec, x.PerSec)
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %s | %d | %d |\n",
			label, p.Clients, p.PerSec, vs, latText(p.P50), latText(p.P99), p.Waits, p.Errors)
		if p.FirstError != "" {
			errs = append(errs, fmt.Sprintf("%s, %d clients: %d errors, first: %s", label, p.Clients, p.Errors, p.FirstError))
		}
	}
	for _, n := range c.Clients {
		for _, s := range []string{"sitebox", "cmsd"} {
			for _, p := range r.Points {
				if p.Setup == s && p.Clients == n {
					row(p, setupLabel(s))
				}
			}
		}
	}
	row(r.Floor, "data server direct (kXR_stat, not a redirect)")

	b.WriteString(formatAddedLatency(r))
	b.WriteString(formatDirectorTargets(r))
	if len(r.PeakRSS) > 0 {
		var parts []string
		for _, s := range []string{"sitebox", "cmsd"} {
			if n, ok := r.PeakRSS[s]; ok {
				parts = append(parts, setupLabel(s)+" "+rssText(n))
			}
		}
		fmt.Fprintf(&b, "\nPeak RSS over the run: %s.\n", strings.Join(parts, "; "))
	}
	if len(errs) > 0 {
		b.WriteString("\nErrors:\n")
		for _, e := range errs {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(e, "\n", " ¶ "))
		}
	}
	return b.String()
}

func setupLabel(s string) string {
	switch s {
	case "sitebox":
		return "sitebox director"
	case "cmsd":
		return "cmsd manager (xrootd + cmsd)"
	}
	return s
}

// formatAddedLatency shows what one redirect costs a client at one
// client: the open→redirect round trip against the data server's own
// answer to a stat.
func formatAddedLatency(r *DirectorReport) string {
	if r.Floor.Err != "" {
		return ""
	}
	var b strings.Builder
	for _, s := range []string{"sitebox", "cmsd"} {
		p, ok := r.find(s, 1)
		if !ok {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\nAdded latency of one redirect, one client (p50 open→redirect − p50 of a kXR_stat the data server answers itself, %s):\n\n", latText(r.Floor.P50))
			b.WriteString("| redirector | p50 open→redirect | floor (direct stat p50) | added |\n|---|---:|---:|---:|\n")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", setupLabel(s), latText(p.P50), latText(r.Floor.P50), latText(p.P50-r.Floor.P50))
	}
	return b.String()
}

// formatDirectorTargets checks the sitebox points against the targets.
func formatDirectorTargets(r *DirectorReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nTargets for the sitebox director: redirects/s ≥ %.1f× the cmsd manager's; added latency ≤ %s at p50 (one client, loopback).\n\n",
		targetRedirectsVsCmsd, latText(targetAddedLatency))
	b.WriteString("| clients | sitebox ÷ cmsd redirects/s | added latency p50 |\n|---:|---:|---:|\n")
	rows := 0
	for _, n := range r.Config.Clients {
		s, ok := r.find("sitebox", n)
		if !ok {
			continue
		}
		vs, lat := "n/a", ""
		if x, ok := r.find("cmsd", n); ok && x.PerSec > 0 {
			vs = verdict(s.PerSec/x.PerSec, targetRedirectsVsCmsd, true, "%.2f×")
		}
		if n == 1 && r.Floor.Err == "" {
			added := s.P50 - r.Floor.P50
			mark := "✗"
			if added <= targetAddedLatency {
				mark = "✓"
			}
			lat = latText(added) + " " + mark
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", n, vs, lat)
		rows++
	}
	if rows == 0 {
		return "\nTargets for the sitebox director: not checked (the sitebox setup did not run).\n"
	}
	return b.String()
}

// latText writes a latency in µs below a millisecond, in ms above.
func latText(d time.Duration) string {
	switch {
	case d < 0:
		return "−" + latText(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
