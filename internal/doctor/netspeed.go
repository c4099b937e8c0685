package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseNetworkSpeed reads a link speed as operators write it — "10Gbit",
// "25Gb/s", "1Gbps", "500MB/s", "800MiB/s" — and returns bytes per second.
// A lower-case b or "bit" means bits, an upper-case B bytes; prefixes are
// decimal (k, M, G, T) unless binary (Ki, Mi, Gi, Ti), as on link specs.
func ParseNetworkSpeed(s string) (float64, error) {
	bad := fmt.Errorf("network speed %q: want a number with a unit, e.g. 10Gbit, 25Gbit, 1Gbit or 500MB/s", s)
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "ps")
	var perUnit float64
	switch {
	case strings.HasSuffix(strings.ToLower(t), "bit"):
		t, perUnit = t[:len(t)-3], 1.0/8
	case strings.HasSuffix(t, "b"):
		t, perUnit = t[:len(t)-1], 1.0/8
	case strings.HasSuffix(t, "B"):
		t, perUnit = t[:len(t)-1], 1
	default:
		return 0, bad
	}
	mult := 1.0
	for _, p := range []struct {
		s string
		m float64
	}{{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"ti", 1 << 40}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}} {
		if strings.HasSuffix(strings.ToLower(t), p.s) {
			t, mult = t[:len(t)-len(p.s)], p.m
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v <= 0 {
		return 0, bad
	}
	return v * mult * perUnit, nil
}

// mbps prints bytes per second as MB/s, the unit disk tools use.
func mbps(bytesPerSec float64) string {
	return fmt.Sprintf("%.0f MB/s", bytesPerSec/1e6)
}
