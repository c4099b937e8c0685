package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// targetTLSCost is the target for the privacy level: TLS may cost
// at most this share of the unprotected throughput. Reported, not
// asserted: it depends on the machine.
const targetTLSCost = 0.15

// ChecksPassed reports whether every refusal that proves a measured row
// held; without them the rows may not measure what they are named after.
func (r *AuthReport) ChecksPassed() bool {
	for _, c := range r.Checks {
		if c.Proof && !c.Refused {
			return false
		}
	}
	return len(r.Checks) > 0
}

// The refusal checks live with the report: they are the evidence it
// states next to the figures.

// refusal is a read the policy must refuse; the refusal must name level,
// so a read failing for another reason (a dead box) does not pass.
type refusal struct {
	what  string
	level string
	proof bool
	argv  []string
	env   []string
}

func (b *authBoxes) refusals() []refusal {
	// A range keeps a wrongly served file to 1 KiB; --fail-with-body
	// keeps the box's reason.
	curl := func(url string) []string {
		return []string{"curl", "-q", "-sS", "--fail-with-body", "-r", "0-1023", "-o", "-", url}
	}
	return []refusal{
		{what: "xrdcp root:// (no TLS) of /bench/privacy", level: "privacy", proof: true,
			argv: xrdcpArgs(b.rootURL("root", "privacy")), env: []string{"XRD_CPUSEPGWRTRD=1"}},
		{what: "xrdcp root:// kXR_read (XRD_CPUSEPGWRTRD=0) of /bench/integrity", level: "integrity", proof: true,
			argv: xrdcpArgs(b.rootURL("root", "integrity")), env: []string{"XRD_CPUSEPGWRTRD=0"}},
		{what: "curl http:// (plain box) of /bench/privacy", level: "privacy", argv: curl(fmt.Sprintf("http://127.0.0.1:%d/bench/privacy/f", b.httpPort))},
		{what: "curl http:// (plain box) of /bench/integrity", level: "integrity", argv: curl(fmt.Sprintf("http://127.0.0.1:%d/bench/integrity/f", b.httpPort))},
	}
}

func runRefusal(ctx context.Context, r refusal) AuthCheck {
	out, err := clientCmd(ctx, r.argv, r.env).CombinedOutput()
	c := AuthCheck{What: r.what, Proof: r.proof, Detail: oneLine(out)}
	// xrdcp 5.5 sometimes reports a refused read as "Received corrupted
	// data": when the refusal of its first chunk fails the file before it
	// queues the next, it ends the copy short and blames the size. It
	// still failed and got no byte, so it counts as refused.
	low := strings.ToLower(string(out))
	c.Refused = err != nil && (strings.Contains(low, r.level) || strings.Contains(low, "received corrupted data"))
	if err == nil {
		c.Detail = "served"
	}
	return c
}

// oneLine is a client's message as one short line for the report.
func oneLine(b []byte) string {
	s := []rune(strings.Join(strings.Fields(string(bytes.ToValidUTF8(b, nil))), " "))
	if len(s) > 200 {
		return string(s[:200]) + "…"
	}
	return string(s)
}

// FormatAuth renders the report as Markdown: the conditions, one row per
// protocol, level and client path with its cost against the same
// protocol unprotected, the refusal checks, the TLS target and the
// boxes' memory.
func FormatAuth(r *AuthReport) string {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "One %d MiB file (hard links in /bench/none, /bench/integrity, /bench/privacy: public-read namespaces at those protection levels) read from the page cache to /dev/null, one client at a time. "+
		"%d round(s), the first path rotating per round; median MB/s. One sitebox box serves root:// (roots:// with its self-signed certificate) and https://; a second box with the same policy over the same pool serves plain http://. Loopback, %d CPUs shared by clients and servers.\n\n",
		c.FileSize>>20, c.Rounds, r.CPUs)

	b.WriteString("| protocol | level | how (client path) | MB/s (median) | runs | cost vs none | TLS ≤ 15 % | CPU s/GB server + client |\n")
	b.WriteString("|---|---|---|---:|---|---:|---|---:|\n")
	for _, row := range r.Rows {
		how := row.How
		if row.Variant {
			how += " *(variant)*"
		}
		cost, target := "—", ""
		if v, ok := r.Cost(row); ok && row.Level != "none" {
			cost = fmt.Sprintf("%.1f %%", 100*v)
			if row.Level == "privacy" {
				target = verdict(100*v, 100*targetTLSCost, false, "%.1f %%")
			}
		}
		cpu := ""
		if row.ServerCPU > 0 || row.ClientCPU > 0 {
			cpu = fmt.Sprintf("%.2f + %.2f = %.2f", row.ServerCPU, row.ClientCPU, row.ServerCPU+row.ClientCPU)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.0f | %s | %s | %s | %s |\n",
			protoLabel(row.Proto), row.Level, how, row.MBps, runsText(row.Runs), cost, target, cpu)
	}
	b.WriteString("\nCPU s/GB: CPU time of the serving process (/proc/<pid>/stat) and of the client per GB moved. With both ends on the same cores, a level costs throughput in proportion to the CPU it adds at both ends.\n")

	b.WriteString("\nRefusals checked once before the rounds (the first two prove the root:// integrity and privacy rows took the protected path):\n\n")
	for _, ch := range r.Checks {
		mark := "✓ refused"
		if !ch.Refused {
			mark = "✗ NOT refused"
		}
		fmt.Fprintf(&b, "- %s: %s — %s\n", ch.What, mark, ch.Detail)
	}
	if !r.ChecksPassed() {
		b.WriteString("\n**A refusal that proves a measured row did not hold: those rows may not measure the protected path.**\n")
	}

	b.WriteString(formatAuthTarget(r))
	b.WriteString(formatAuthConnect(r))
	b.WriteString(formatAuthGSI(r))
	fmt.Fprintf(&b, "\nPeak RSS over the run: root:// + https:// box %s; plain http:// box %s.\n",
		rssText(r.PeakRSS["box"]), rssText(r.PeakRSS["plain"]))
	return b.String()
}

// formatAuthTarget sums the target up per protocol, on the main privacy
// row (the variants are in the table).
func formatAuthTarget(r *AuthReport) string {
	var parts []string
	for _, row := range r.Rows {
		if row.Level != "privacy" || row.Variant || row.Server == "xrootd" {
			continue
		}
		if v, ok := r.Cost(row); ok {
			parts = append(parts, protoLabel(row.Proto)+" "+verdict(100*v, 100*targetTLSCost, false, "%.1f %%"))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("\nTarget: TLS (privacy) costs ≤ %.0f %% of the unprotected throughput on this machine: %s.\n",
		100*targetTLSCost, strings.Join(parts, "; "))
}

func protoLabel(p string) string {
	if p == "root" {
		return "root://"
	}
	return "https://"
}

func runsText(runs []float64) string {
	s := make([]string, len(runs))
	for i, v := range runs {
		s[i] = fmt.Sprintf("%.0f", v)
	}
	return strings.Join(s, ", ")
}
