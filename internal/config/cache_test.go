package config

import (
	"strings"
	"testing"
)

func TestCacheProblemsNamedWithLines(t *testing.T) {
	text := `[cache]
dir = "relative/dir"
ram = "lots"
block_size = "3MiB"
revalidate = "soon"
high_water = "80%"
low_water = "90%"
files_high_water = "1000"
files_low_water = "10%"

[[cache.route]]
prefix = "/store"
upstreams = ["ftp://x:1", "root://nohostport"]

[[cache.route]]
prefix = "/store"
upstreams = []
`
	ps := problemsIn(t, "site.toml", text)
	want := map[string]int{ // problem key → line
		"cache.dir":                2,
		"cache.ram":                3,
		"cache.block_size":         4,
		"cache.revalidate":         5,
		"cache.low_water":          7,
		"cache.files_low_water":    9,
		"cache.route[1].upstreams": 13,
		"cache.route[2].prefix":    16,
		"cache.route[2].upstreams": 17,
	}
	got := map[string]int{}
	for _, p := range ps.List {
		got[p.Key] = p.Line
	}
	for k, line := range want {
		if got[k] != line {
			t.Errorf("%s: line %d, want %d (all: %v)", k, got[k], line, ps.List)
		}
	}
	if !strings.Contains(ps.Error(), "ftp://x:1") || !strings.Contains(ps.Error(), "nohostport") {
		t.Errorf("upstream problems not named: %v", ps)
	}
}

func TestCacheValid(t *testing.T) {
	dir := t.TempDir()
	text := `[cache]
dir = "` + dir + `"
high_water = "500GiB"
low_water = "400GiB"
[[cache.route]]
prefix = "/store"
upstreams = ["root://origin.example.org:1094", "https://backup.example.org:8443/data"]
`
	cfg, _, err := Parse("site.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyDefaults("box", false)
	if ps := cfg.Validate(); len(ps) != 0 || cfg.Cache.RAM != 1<<30 || cfg.Cache.Streams != 16 {
		t.Fatalf("problems %v, cache %+v", ps, cfg.Cache)
	}
	if l := cfg.Cache.HighWater; l != 500*(1<<30) || l.String() != "500GiB" {
		t.Fatalf("high water %v", l)
	}
}

func TestCacheOverlappingExport(t *testing.T) {
	dir := t.TempDir()
	text := `[[export]]
prefix = "/store"
pools = ["` + dir + `"]
[cache]
dir = "` + dir + `"
[[cache.route]]
prefix = "/store/remote"
upstreams = ["root://h:1094"]
`
	_, _, err := Parse("site.toml", []byte(text))
	if err == nil || !strings.Contains(err.Error(), "overlaps export[1]") {
		t.Fatalf("err = %v", err)
	}
}

// TestCacheUpstreamLimitsChecked: bad upstream_idle and upstream_files
// are named with their lines.
func TestCacheUpstreamLimitsChecked(t *testing.T) {
	text := `[cache]
dir = "/srv/cache"
upstream_idle = "a while"
upstream_files = -3

[[cache.route]]
prefix = "/store"
upstreams = ["root://h:1094"]
`
	ps := problemsIn(t, "site.toml", text)
	got := map[string]int{}
	for _, p := range ps.List {
		got[p.Key] = p.Line
	}
	for k, line := range map[string]int{"cache.upstream_idle": 3, "cache.upstream_files": 4} {
		if got[k] != line {
			t.Errorf("%s: line %d, want %d (all: %v)", k, got[k], line, ps.List)
		}
	}
}

// TestCacheTypedMessages: sizes, durations and watermarks are read once,
// as the file is decoded; what is wrong with each is said in its own
// words, at its line, a number where text was meant included.
func TestCacheTypedMessages(t *testing.T) {
	text := `[cache]
dir = "/srv/cache"
block_size = "big"
revalidate = "soon"
upstream_idle = 30
high_water = 90
purge_interval = "-1s"
ram = "128KiB"

[[cache.route]]
prefix = "/store"
upstreams = ["root://h:1094"]
`
	ps := problemsIn(t, "site.toml", text)
	want := []string{
		`line 3: cache.block_size: "big" is not a size (examples: 1GiB, 512MiB, 50MB, 4096)`,
		`line 4: cache.revalidate: "soon" is not a duration (examples: 30s, 10m, 1h)`,
		`line 5: cache.upstream_idle: want a duration in quotes (e.g. "30s"), found the number 30`,
		`line 6: cache.high_water: want text in quotes, found the number 90`,
		`line 7: cache.purge_interval: "-1s" is not a positive duration (e.g. "10s")`,
		`line 8: cache.ram: "128KiB" is less than 4 blocks of "1MiB" (block_size)`,
	}
	wantProblems(t, ps, want...)
	if len(ps.List) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(ps.List), len(want), ps)
	}

	// A block size that parses but is no power of two, and one that is.
	text = strings.Replace(strings.Replace(text, `"big"`, `"3MiB"`, 1), `ram = "128KiB"`, ``, 1)
	_, _, err := Parse("site.toml", []byte(text))
	if err == nil || !strings.Contains(err.Error(), `line 3: cache.block_size: "3MiB" must be a power of two from 64KiB to 64MiB`) {
		t.Errorf("err = %v", err)
	}
}

// A size or duration whose zero means "unset" is refused when the file
// writes zero, rather than silently taking the default.
func TestZeroIsNotUnset(t *testing.T) {
	text := `[cache]
dir = "/srv/cache"
revalidate = "0s"
ram = 0
[[cache.route]]
prefix = "/store"
upstreams = ["root://h:1094"]
[director]
locate_timeout = "0s"
startup_wait = "0s"
[probe]
interval = "0s"
[jobs]
memory = "0"
`
	ps := problemsIn(t, "site.toml", text)
	want := []string{
		`line 3: cache.revalidate: "0s" is not a positive duration (leave the setting out for its default)`,
		`line 4: cache.ram: 0 is not a positive size (leave the setting out for its default)`,
		`line 9: director.locate_timeout: "0s" is not a positive duration (leave the setting out for its default)`,
		`line 14: jobs.memory: "0" is not a positive size (leave the setting out for its default)`,
	}
	wantProblems(t, ps, want...)
	// startup_wait = "0s" turns the wait off and [probe] interval = "0s"
	// probes never: both are allowed.
	if strings.Contains(ps.Error(), "startup_wait") || strings.Contains(ps.Error(), "probe") {
		t.Errorf("a zero that means something was refused:\n%v", ps)
	}
}

// A number where a duration was meant is named beside an unknown
// setting, not read as nanoseconds.
func TestNumberForDurationBesideUnknownSetting(t *testing.T) {
	text := `[cache]
dir = "/srv/cache"
revalidate = 30
colour = "blue"
[[cache.route]]
prefix = "/store"
upstreams = ["root://h:1094"]
`
	ps := problemsIn(t, "site.toml", text)
	wantProblems(t, ps, `line 3: cache.revalidate: want a duration in quotes (e.g. "30s"), found the number 30`, `line 4: cache.colour: unknown setting`)
	if len(ps.List) != 2 {
		t.Errorf("%d problems, want 2:\n%v", len(ps.List), ps)
	}
}
