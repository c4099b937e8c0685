package bench

import (
	"fmt"
	"os"
	"strings"
)

// NetnsEnv is set (to the congestion control asked for) in the
// environment of a benchmark that sitebox-bench re-ran in a private
// network namespace, whose congestion control it set.
const NetnsEnv = "SITEBOX_BENCH_NETNS"

// LinkCongestion is the TCP congestion control new loopback connections
// here get ("" if unknown), asked of such a connection: the loopback
// routes of sitebox-bench's own namespace may name one of their own. The
// emulated link is Toxiproxy on loopback: the origin's socket into it
// sees a round trip of microseconds, whatever latency Toxiproxy adds
// behind it, and BBR sizes its window to that. A reply of a few loopback
// segments then waits, now and then, for a delayed ACK (tens of
// milliseconds): the many short replies of a cache's parallel streams
// more often than one long-lived client connection. A real WAN's round
// trip gives BBR a real window.
func LinkCongestion() string {
	if cc := loopbackCongestion(); cc != "" {
		return cc
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// congestionNote is the report line naming the host's congestion control,
// with a warning where it distorts the emulated link (see LinkCongestion).
func congestionNote(cc string) string {
	switch cc {
	case "":
		return ""
	case "bbr":
		return "TCP congestion control: bbr, the host's. On the loopback hops of the emulated link it stalls some replies for tens of milliseconds; cold rates of many-stream readers (the sitebox cache) are understated (--link-congestion, docs/benchmarks.md).\n"
	}
	where := "the host's"
	if os.Getenv(NetnsEnv) != "" {
		where = "in the benchmark's own network namespace"
	}
	return fmt.Sprintf("TCP congestion control: %s, %s.\n", cc, where)
}
