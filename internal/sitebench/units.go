package sitebench

import "fmt"

// Sample is aggregate client throughput in one time bin.
type Sample struct {
	T    float64 // bin start, seconds from the point's start
	MBps float64
}

// MB renders a byte count in decimal units, as MB/s columns are.
func MB(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// MiB renders a size in binary units, as file and block sizes are given.
func MiB(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	if n >= 1<<20 {
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
