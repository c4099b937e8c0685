package box

import (
	"context"
	"net/http"
	"sort"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/jobs"
	"sitebox/internal/metrics"
	"sitebox/internal/version"
	"sitebox/internal/web"
)

// dashboardTop is how many files, users and VOs the dashboard ranks.
const dashboardTop = 10

// withDashboard mounts the web dashboard (internal/web) on the https mux
// and has Run sample transfer totals for its rate chart.
func (b *Box) withDashboard(mux *http.ServeMux) {
	if !b.cfg.Server.DashboardEnabled() {
		return
	}
	rec, err := web.NewRecorder(web.RecorderConfig{}, b.transfers.Totals)
	if err != nil {
		// Only a bad config can fail, and the zero config is valid: serve
		// the page without rates rather than refuse to start the box.
		b.log.Warn("dashboard: no rate history", "err", err)
		rec = nil
	}
	if rec != nil {
		b.add(roleFuncs{run: func(ctx context.Context) error { rec.Run(ctx); return nil }})
	}
	if b.director != nil {
		b.dirRates = b.directorRecorder()
	}
	started := time.Now()
	mux.Handle(web.Prefix, web.Handler(web.SourceFunc(func() web.Snapshot { return b.dashboardSnapshot(started) }), rec, b.dashboardViewer()))
}

// dashboardSnapshot gathers what each role knows now. Sections of roles
// the box does not play stay nil, for the page to say so.
func (b *Box) dashboardSnapshot(started time.Time) web.Snapshot {
	now := time.Now()
	s := web.Snapshot{Box: web.BoxInfo{
		Name: b.cfg.Server.Name, Site: b.cfg.Server.Site, Version: version.String(), Roles: b.roles(),
		AdvertisesTo: append([]string{}, b.cfg.Advertise.To...), Started: started, Now: now,
		Problems: b.problems(now),
	}}
	files, users, vos := b.transfers.Top(dashboardTop)
	s.Transfers = web.Transfers{Totals: b.transfers.Totals(), Files: tops(files), Users: tops(users), VOs: tops(vos)}
	if b.cache != nil {
		s.Cache = cacheView(b)
	}
	if b.director != nil {
		s.Federation = b.federationView(now)
	}
	if b.jobs != nil {
		s.Jobs = jobsView(b.jobs, now)
	}
	return s
}

// roles names what the box does, in the order a reader thinks of them.
func (b *Box) roles() []string {
	roles := []string{}
	if len(b.cfg.Exports) > 0 {
		roles = append(roles, director.RoleOrigin)
	}
	if b.cache != nil {
		roles = append(roles, director.RoleCache)
	}
	if b.director != nil {
		roles = append(roles, director.RoleDirector)
	}
	if b.jobs != nil {
		roles = append(roles, "jobs")
	}
	return roles
}

func tops(in []metrics.TopEntry) []web.Top {
	out := make([]web.Top, 0, len(in))
	for _, e := range in {
		out = append(out, web.Top(e))
	}
	return out
}

func cacheView(b *Box) *web.Cache {
	st := b.cache.Stats()
	ratio := -1.0
	if served := st.HitBytes + st.MissBytes + st.BypassBytes; served > 0 {
		ratio = float64(st.HitBytes) / float64(served)
	}
	return &web.Cache{
		HitBytes: st.HitBytes, MissBytes: st.MissBytes, BypassBytes: st.BypassBytes, UpstreamBytes: st.UpstreamBytes,
		HitRatio: ratio, UsedBytes: st.UsedBytes, Files: st.Files, OpenFiles: st.OpenFiles,
		RAMInUse: st.RAMInUse, RAMLimit: st.RAMLimit, DiskTotal: st.DiskTotal, DiskFree: st.DiskFree,
		InodesTotal: st.InodesTotal, InodesFree: st.InodesFree, DiskError: st.DiskError,
	}
}

// directorRecorder samples the director's decisions and locate searches
// for the dashboard's charts of redirect rates and locate latency: the
// same ring as the transfer rates, over counters that only grow
// ("decision/<kind>", "locate/searches", "locate/us" — microseconds
// spent searching, whose rate over the searches' is the mean latency).
func (b *Box) directorRecorder() *web.Recorder {
	rec, err := web.NewRecorder(web.RecorderConfig{}, func() map[string]int64 {
		st := b.director.Stats()
		m := map[string]int64{"locate/searches": st.Searches, "locate/us": int64(st.SearchSeconds * 1e6)}
		for k, v := range st.Decisions {
			m["decision/"+k] = v
		}
		return m
	})
	if err != nil {
		b.log.Warn("dashboard: no director history", "err", err)
		return nil
	}
	b.add(roleFuncs{run: func(ctx context.Context) error { rec.Run(ctx); return nil }})
	return rec
}

func (b *Box) federationView(now time.Time) *web.Federation {
	f := &web.Federation{Name: b.cfg.Server.Name, Site: b.cfg.Server.Site, Parents: b.cfg.Director.Parents,
		Servers: []web.Server{}, Decisions: b.director.Stats().Decisions, Rates: web.Rates{Times: []int64{}, Series: map[string][]float64{}}}
	if b.dirRates != nil {
		f.Rates = b.dirRates.Rates()
	}
	for vo := range b.cfg.Director.VO {
		f.VOs = append(f.VOs, vo)
	}
	sort.Strings(f.VOs)
	for _, s := range b.director.Servers() {
		state, health := serverState(s, now)
		f.Servers = append(f.Servers, web.Server{
			Name: s.Name, Site: s.Site, Role: s.Role, Root: s.Root, HTTPS: s.HTTPS, Prefixes: append([]string{}, s.Prefixes...),
			Free: s.Free, Total: s.Total, Load: s.Load, Version: s.Version, State: state, Health: health,
			Static: s.Static, Via: s.Via, LastSeen: s.LastSeen, SecondsAgo: now.Sub(s.LastSeen).Seconds(),
		})
	}
	return f
}

// serverState sums up a registry entry in the order an operator cares:
// planned work first (it explains the rest), then failures, then what
// the server says about itself. It mirrors the director's own idea of
// usable (not down, not silent, not in downtime).
func serverState(s director.Server, now time.Time) (state, health string) {
	switch {
	case s.Downtime.Active(now):
		return "downtime", s.Downtime.Reason + " (until " + s.Downtime.End.Local().Format("01-02 15:04") + ")"
	case s.Down:
		return "down", "probe failed" + sinceText(s.DownSince)
	case !s.Static && now.After(s.Expires):
		return "down", "stopped advertising" + sinceText(s.DownSince)
	case s.Health != "" && s.Health != "ok":
		return "degraded", s.Health
	}
	return "ok", "ok"
}

func jobsView(svc *jobs.Service, now time.Time) *web.Jobs {
	j := &web.Jobs{Counts: map[string]map[string]int{}}
	for domain, byState := range svc.Counts() {
		if domain == "" {
			domain = "none" // not placed yet, as in the metrics
		}
		m := map[string]int{}
		for st, n := range byState {
			m[string(st)] = n
		}
		j.Counts[domain] = m
	}
	r := svc.Report(now.Add(-24 * time.Hour))
	j.Report = web.Report{Since: r.Since, Until: r.Until, Cores: r.Cores, Rows: []web.ReportRow{}}
	for _, row := range r.Rows {
		j.Report.Rows = append(j.Report.Rows, web.ReportRow{
			Class: row.Class, Jobs: row.Jobs, Failed: row.Failed, CPUHours: row.CPUHours, CoreWallH: row.CoreWallH,
			Efficiency: row.Efficiency, WallUtil: row.WallUtil, CPUUtil: row.CPUUtil, Local: row.LocalCounted,
		})
	}
	return j
}

// sinceText says since when a server is down ("" when unknown).
func sinceText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " since " + t.Local().Format("01-02 15:04:05")
}
