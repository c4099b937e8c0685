package bench

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCPUPerOp(t *testing.T) {
	// 0.70 s of server CPU over 4,000 vector reads: 175 µs each.
	got, err := cpuPerOp(1230*time.Millisecond, 1930*time.Millisecond, 4000)
	if err != nil || got != 175*time.Microsecond {
		t.Errorf("cpuPerOp = %v, %v; want 175µs", got, err)
	}
	if _, err := cpuPerOp(time.Second, time.Second, 0); err == nil {
		t.Error("no operations: want an error")
	}
	if _, err := cpuPerOp(2*time.Second, time.Second, 10); err == nil {
		t.Error("CPU time going backwards: want an error")
	}
}

func TestParseOriginModes(t *testing.T) {
	got, err := ParseOriginModes([]string{"readv", "plain", "readv"})
	if err != nil || !slices.Equal(got, []string{"plain", "readv"}) {
		t.Errorf("got %v, %v; want [plain readv] in run order, repeats dropped", got, err)
	}
	if got, _ := ParseOriginModes(nil); !slices.Equal(got, OriginModes) {
		t.Errorf("no modes: got %v, want all", got)
	}
	if _, err := ParseOriginModes([]string{"vector"}); err == nil || !strings.Contains(err.Error(), "plain, streams, readv") {
		t.Errorf("unknown mode: got %v, want an error naming the modes", err)
	}
}

func TestCopySetups(t *testing.T) {
	servers := []setup{{name: "sitebox", port: 1}, {name: "xrootd", port: 2}}
	var names []string
	for _, s := range copySetups(servers, []string{"streams"}) {
		names = append(names, s.name)
		if want := []string{"xrdcp", "-S", "4", "-f", "-s"}; !slices.Equal(s.xrdcp()[:5], want) {
			t.Errorf("%s runs %v, want it to begin %v", s.name, s.xrdcp(), want)
		}
	}
	if !slices.Equal(names, []string{"sitebox/streams", "xrootd/streams"}) {
		t.Errorf("streams setups %v", names)
	}
	if n := len(copySetups(servers, []string{"plain", "streams"})); n != 6 {
		t.Errorf("plain and streams: %d setups, want 6", n)
	}
}

func TestFormatOriginReadv(t *testing.T) {
	rep := &OriginReport{Readv: []ReadvResult{
		{Server: "sitebox", Rate: 3775, CPUPerReadv: 173 * time.Microsecond},
		{Server: "xrootd", Rate: 4989, CPUPerReadv: 160 * time.Microsecond},
	}}
	out := FormatOrigin(rep)
	for _, want := range []string{"| readv/s | 3775 | 4989 | 0.76× |", "| server CPU per readv | 173 µs | 160 µs | 1.08× |"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "clients") {
		t.Errorf("a readv-only report has a copy table:\n%s", out)
	}
}

func TestFormatOriginCopies(t *testing.T) {
	rep := &OriginReport{Copies: []OriginResult{
		{Server: "sitebox/streams", Clients: 4, MBps: 1200, RSSMiB: 50},
		{Server: "xrootd/streams", Clients: 4, MBps: 1000, RSSMiB: 40},
	}}
	out := FormatOrigin(rep)
	if !strings.Contains(out, "| 4 | -S 4 (default path) | 1200 | 1000 | 1.20× |") || strings.Contains(out, "pgread") {
		t.Errorf("streams-only report:\n%s", out)
	}
}
