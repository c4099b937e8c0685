package web

import "time"

// Source gives the dashboard the box's current state. The handler calls
// it once per snapshot request, from any goroutine, so it must be safe
// for concurrent use.
type Source interface {
	Snapshot() Snapshot
}

// SourceFunc adapts a function to Source.
type SourceFunc func() Snapshot

// Snapshot calls f.
func (f SourceFunc) Snapshot() Snapshot { return f() }

// Snapshot is what GET api/snapshot returns: the box and one section per
// role. A nil section means the box does not play that role, which the
// page says in words rather than drawing empty charts. The types are the
// dashboard's own (not the roles' structs) so the JSON the page depends
// on changes only when this file does.
type Snapshot struct {
	// NamesHidden says the snapshot was served to an anonymous visitor:
	// file names and user subjects are left out (see Viewer).
	NamesHidden bool `json:"names_hidden"`
	// NamesHiddenWhy says why a request with a valid token still got the
	// anonymous view (its identity is no operator's).
	NamesHiddenWhy string `json:"names_hidden_why,omitempty"`
	// Operator is who the names are shown to, when they are.
	Operator   string      `json:"operator,omitempty"`
	Box        BoxInfo     `json:"box"`
	Transfers  Transfers   `json:"transfers"`
	Cache      *Cache      `json:"cache"`
	Federation *Federation `json:"federation"`
	Jobs       *Jobs       `json:"jobs"`
}

// BoxInfo is the page header.
type BoxInfo struct {
	Name    string   `json:"name"`
	Site    string   `json:"site"`
	Version string   `json:"version"`
	Roles   []string `json:"roles"` // origin, cache, director, jobs
	// AdvertisesTo are the directors this box reports to ([advertise]).
	AdvertisesTo []string `json:"advertises_to"`
	// Problems are failures the page shows in red beside its status:
	// advertisements a director did not take, upstream errors of the
	// cache. Empty when all is well.
	Problems []string  `json:"problems,omitempty"`
	Started  time.Time `json:"started"`
	Now      time.Time `json:"now"`
}

// Transfers is what the frontends moved. Rates is filled by the handler
// from its Recorder; the Source fills the rest.
type Transfers struct {
	Totals map[string]int64 `json:"totals"` // bytes since start by "proto/in|out"
	Rates  Rates            `json:"rates"`
	Files  []Top            `json:"top_files"` // nil when names are hidden
	Users  []Top            `json:"top_users"` // nil when names are hidden
	VOs    []Top            `json:"top_vos"`
}

// Top is a file, user or VO with the bytes it moved.
type Top struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// Cache is the caching proxy's hit ratio and disk.
type Cache struct {
	HitBytes      int64 `json:"hit_bytes"`
	MissBytes     int64 `json:"miss_bytes"`
	BypassBytes   int64 `json:"bypass_bytes"`
	UpstreamBytes int64 `json:"upstream_bytes"`
	// HitRatio is hit bytes ÷ all bytes served, or -1 before the first
	// read (so the page says "no reads yet" instead of "0 %").
	HitRatio    float64 `json:"hit_ratio"`
	UsedBytes   int64   `json:"used_bytes"`
	Files       int64   `json:"files"`
	OpenFiles   int64   `json:"open_files"`
	RAMInUse    int64   `json:"ram_in_use"`
	RAMLimit    int64   `json:"ram_limit"`
	DiskTotal   int64   `json:"disk_total"`
	DiskFree    int64   `json:"disk_free"`
	InodesTotal int64   `json:"inodes_total"`
	InodesFree  int64   `json:"inodes_free"`
	DiskError   string  `json:"disk_error,omitempty"`
}

// Federation is a director's registry: the servers that advertise to it
// (or are probed), for the tree by site.
type Federation struct {
	Name      string           `json:"name"`
	Site      string           `json:"site"`
	Parents   []string         `json:"parents,omitempty"`
	VOs       []string         `json:"vos,omitempty"`
	Servers   []Server         `json:"servers"`
	Decisions map[string]int64 `json:"decisions"`
	// Rates is the director's history: per second, the decisions by
	// kind ("decision/site", "decision/cache", …, "decision/not_found")
	// and the locate searches ("locate/searches") and microseconds spent
	// in them ("locate/us"; over the searches, the mean latency).
	Rates Rates `json:"rates"`
}

// Server is one registry entry with its health worked out: State is
// "ok", "degraded" (it says something is wrong), "down" (a probe failed
// or it stopped advertising; Health says since when; it stays listed
// until an operator removes it) or "downtime" (planned).
type Server struct {
	Name       string    `json:"name"`
	Site       string    `json:"site"`
	Role       string    `json:"role"`
	Root       string    `json:"root,omitempty"`
	HTTPS      string    `json:"https,omitempty"`
	Prefixes   []string  `json:"prefixes"`
	Free       int64     `json:"free"`
	Total      int64     `json:"total"`
	Load       float64   `json:"load"`
	Version    string    `json:"version"`
	State      string    `json:"state"`
	Health     string    `json:"health"` // the server's own words, or the downtime's reason
	Static     bool      `json:"static"`
	Via        string    `json:"via,omitempty"`
	LastSeen   time.Time `json:"last_seen"`
	SecondsAgo float64   `json:"seconds_ago"` // since LastSeen, by the box's clock
}

// Jobs is the job router: jobs by domain and state now, and the
// accounting of the last day.
type Jobs struct {
	Counts map[string]map[string]int `json:"counts"` // domain ("none" before placement) → state → jobs
	Report Report                    `json:"report"`
}

// Report is the utilization table.
type Report struct {
	Since time.Time   `json:"since"`
	Until time.Time   `json:"until"`
	Cores int         `json:"cores"`
	Rows  []ReportRow `json:"rows"`
}

// ReportRow is one class of jobs.
type ReportRow struct {
	Class      string  `json:"class"`
	Jobs       int     `json:"jobs"`
	Failed     int     `json:"failed"`
	CPUHours   float64 `json:"cpu_hours"`
	CoreWallH  float64 `json:"core_wall_hours"`
	Efficiency float64 `json:"cpu_efficiency"`
	WallUtil   float64 `json:"wall_utilization"`
	CPUUtil    float64 `json:"cpu_utilization"`
	Local      bool    `json:"local"` // utilization counts only local jobs
}
