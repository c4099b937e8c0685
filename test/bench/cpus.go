package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// cpuPlan is where the analysis mode runs what. A cache box serves
// worker nodes: its cores are not the readers' cores. On one machine the
// readers — Python threads that need more CPU per vector read than the
// server answering it — otherwise share the servers' cores, and a
// setup's rate measures how its threads and the readers' take turns on
// them as much as the server. With enough CPUs the readers get some of
// their own, and everything else the bench runs (the servers, the link,
// the bench itself) the rest. On fewer than four the rest would be one
// CPU for the cache, the origin and the link together, which slows cold
// reads more than sharing does, so "auto" splits nothing there.
type cpuPlan struct {
	readers, rest []int // both empty: nothing is pinned
}

func (p cpuPlan) pinned() bool { return len(p.readers) > 0 }

// describe is the report's line on the plan.
func (p cpuPlan) describe() string {
	if !p.pinned() {
		return "CPUs: the readers share every CPU with the servers and the link (--reader-cpus)."
	}
	return fmt.Sprintf("CPUs: readers on %s; servers, link and bench on %s (--reader-cpus).", cpuList(p.readers), cpuList(p.rest))
}

// planFor splits the CPUs this process may use (avail, ascending) by
// spec: "auto" or "" (on four or more CPUs, the last quarter of them for
// the readers), "none" (no split), or a list of CPUs for the readers
// ("3", "2-3", "0,2").
func planFor(spec string, avail []int) (cpuPlan, error) {
	switch spec {
	case "none":
		return cpuPlan{}, nil
	case "", "auto":
		n := len(avail)
		if n < 4 {
			return cpuPlan{}, nil
		}
		return cpuPlan{readers: avail[n-n/4:], rest: avail[:n-n/4]}, nil
	}
	readers, err := parseCPUList(spec)
	if err != nil {
		return cpuPlan{}, fmt.Errorf("reader CPUs %q: %w", spec, err)
	}
	if len(avail) == 0 {
		return cpuPlan{}, fmt.Errorf("reader CPUs %q: this system does not tell which CPUs the bench may use (Linux only)", spec)
	}
	for _, c := range readers {
		if !slices.Contains(avail, c) {
			return cpuPlan{}, fmt.Errorf("reader CPUs %q: CPU %d is not one this process may use (%s)", spec, c, cpuList(avail))
		}
	}
	var rest []int
	for _, c := range avail {
		if !slices.Contains(readers, c) {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return cpuPlan{}, fmt.Errorf("reader CPUs %q leave no CPU for the servers (%s available)", spec, cpuList(avail))
	}
	return cpuPlan{readers: readers, rest: rest}, nil
}

// parseCPUList parses a Linux CPU list ("0,2-3"), ascending and without
// repeats.
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a CPU number", lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of CPUs", part)
			}
		}
		if b-a > 4096 {
			return nil, fmt.Errorf("%q: range too large", part)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// cpuList writes ascending CPUs as a Linux CPU list, runs as ranges.
func cpuList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i])+"-"+strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
