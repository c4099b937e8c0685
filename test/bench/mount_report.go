package bench

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// FormatMount renders the run as Markdown: the figures, then the ratios
// the mount's targets are stated in, for each round trip time.
func FormatMount(rep *MountReport) string {
	var b strings.Builder
	c := rep.Config
	fmt.Fprintf(&b, "Build: %d sources × %d includes over %d include dirs of %d headers, make -j2, objects on local disk. "+
		"Sweep: CMSSW build calls ÷ %d (%d opens, %d stats, %d lstats, %d readlinks). "+
		"Sequential: %d MiB in 1 MiB reads (root: xrdcp; *-cache: through a fresh sitebox cache box each). fio: 4 KiB random reads of a %d MiB file read once before, %v. "+
		"uproot: 4 of 200 branches, %d entries, %d jobs per reader process (root: root:// URLs).\n\n",
		c.Sources, includesPerSrc, includeDirs, c.Headers, c.Scale, cmsswOpens/c.Scale, cmsswStats/c.Scale, cmsswLstats/c.Scale, cmsswReadlinks/c.Scale,
		c.SeqSize>>20, c.FioSize>>20, c.FioTime, c.Entries, c.Jobs)
	w := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	fmt.Fprint(w, "| RTT\t| setup\t| build cold\t| build warm\t| sweep cold\t| sweep warm\t| seq MB/s\t| fio IOPS\t|")
	for _, n := range c.Readers {
		fmt.Fprintf(w, " uproot %d MB/s\t|", n)
	}
	fmt.Fprint(w, "\n|")
	for range 8 + len(c.Readers) {
		fmt.Fprint(w, " ---:\t|")
	}
	fmt.Fprintln(w)
	for _, p := range rep.Points {
		fmt.Fprintf(w, "| %v\t| %s\t|", p.RTT, p.label())
		if p.Unavailable != "" {
			fmt.Fprintf(w, " not available\t|")
			for range 5 + len(c.Readers) {
				fmt.Fprint(w, " \t|")
			}
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, " %s\t| %s\t| %s\t| %s\t| %s\t| %s\t|", secs(p.BuildCold), secs(p.BuildWarm), secs(p.SweepCold), secs(p.SweepWarm), num(p.SeqMBps, 1), num(p.FioIOPS, 0))
		for _, n := range c.Readers {
			fmt.Fprintf(w, " %s\t|", num(p.Uproot[n], 1))
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	b.WriteString(mountRatios(rep))
	b.WriteString(findSummary(rep))
	if c.does("fiorw") {
		b.WriteString(mountRW(rep))
	}
	for _, p := range rep.Points {
		for _, e := range p.Errs {
			fmt.Fprintf(&b, "\n%v %s: %s", p.RTT, p.label(), firstLine(e))
		}
		if p.SweepNote != "" {
			fmt.Fprintf(&b, "\n%v %s sweep: %s", p.RTT, p.label(), p.SweepNote)
		}
		if p.Unavailable != "" {
			fmt.Fprintf(&b, "\n%v %s: %s", p.RTT, p.label(), p.Unavailable)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// mountRatios is the targets' table: each mount against local disk and
// against the root:// clients at the same round trip time.
func mountRatios(rep *MountReport) string {
	var b strings.Builder
	b.WriteString("\nRatios (× local disk: the mount's time over local disk's; fio: local IOPS over the mount's; seq and uproot: the mount's MB/s over root://'s, through the cache box for sitebox-cache):\n\n")
	w := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	last := 0
	if n := len(rep.Config.Readers); n > 0 {
		last = rep.Config.Readers[n-1]
	}
	fmt.Fprintf(w, "| RTT\t| mount\t| build cold × local\t| build warm × local\t| sweep cold × local\t| sweep warm × local\t| fio × local\t| seq ÷ xrdcp\t| uproot %d ÷ root://\t| build cold: xrootdfs ÷ this\t|\n", last)
	fmt.Fprintln(w, "| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t|")
	for _, p := range rep.Points {
		if p.Setup == "local" || p.Setup == "root" || p.Setup == rootCacheSetup || p.Unavailable != "" {
			continue
		}
		local, root, xfs := findPoint(rep, p.RTT, "local"), findPoint(rep, p.RTT, baselineSetup(p.Setup)), findPoint(rep, p.RTT, "xrootdfs")
		fmt.Fprintf(w, "| %v\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t|\n", p.RTT, p.label(),
			mountRatio(p.BuildCold.Seconds(), local.BuildCold.Seconds()), mountRatio(p.BuildWarm.Seconds(), local.BuildWarm.Seconds()),
			mountRatio(p.SweepCold.Seconds(), local.SweepCold.Seconds()), mountRatio(p.SweepWarm.Seconds(), local.SweepWarm.Seconds()),
			mountRatio(local.FioIOPS, p.FioIOPS), mountRatio(p.SeqMBps, root.SeqMBps), mountRatio(p.Uproot[last], root.Uproot[last]),
			mountRatio(xfs.BuildCold.Seconds(), p.BuildCold.Seconds()))
	}
	w.Flush()
	return b.String()
}

// mountRW is the fiorw table: each mount's fio read and write figures,
// on a writable mount of its own (the sitebox rows per protection level).
func mountRW(rep *MountReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nfio read and write on a writable mount: a %d MiB file written and read in 1 MiB blocks (writes end with fsync: uploaded), then 4 KiB random reads and writes for %v each:\n\n",
		rep.Config.FioSize>>20, rep.Config.FioTime)
	w := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	fmt.Fprintln(w, "| RTT\t| setup\t| seq write MB/s\t| seq read MB/s\t| rand read IOPS\t| rand write IOPS\t|")
	fmt.Fprintln(w, "| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t| ---:\t|")
	for _, p := range rep.Points {
		if p.Setup == "root" || p.Setup == rootCacheSetup || p.Unavailable != "" {
			continue
		}
		fmt.Fprintf(w, "| %v\t| %s\t| %s\t| %s\t| %s\t| %s\t|\n", p.RTT, p.label(),
			num(p.RW.SeqWriteMBps, 1), num(p.RW.SeqReadMBps, 1), num(p.RW.RandReadIOPS, 0), num(p.RW.RandWriteIOPS, 0))
	}
	w.Flush()
	return b.String()
}

func findPoint(rep *MountReport, rtt time.Duration, setup string) MountPoint {
	for _, p := range rep.Points {
		if p.RTT == rtt && p.Setup == setup && p.Unavailable == "" {
			return p
		}
	}
	return MountPoint{Uproot: map[int]float64{}}
}

func mountRatio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func secs(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func num(v float64, prec int) string {
	if v <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, v)
}
