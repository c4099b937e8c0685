package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/jobs/spec"
	"sitebox/internal/tlsutil"
	"sitebox/test/peers"
)

// JobsConfig describes the job-router benchmark: N short jobs (/bin/true)
// submitted to a real box's API and run in its local domain. Zero fields
// take the documented defaults.
type JobsConfig struct {
	Sitebox string // sitebox binary: the box, and the job supervisors it starts
	WorkDir string // scratch; the box's state goes to WorkDir/box, replaced each run
	Jobs    int    // jobs per phase (default 2000)
	Clients int    // concurrent clients submitting one job per request (default 8)
	CPUs    int    // cores of the box's local domain (default 2)
	// SlotUsers the box runs the jobs as (default sbxslot10-12, which
	// scripts/setup.sh makes); WorkDir's parents must be searchable by
	// them.
	SlotUsers []string
	// Batch adds a second phase once the first has drained: the same
	// number of jobs in one submission (a submit file's "queue N").
	Batch bool
	// Timeout bounds each phase's wait for its jobs to end (default 10 min).
	Timeout time.Duration
	Out     io.Writer // progress lines (default: discarded)
}

func (c *JobsConfig) applyDefaults() {
	if c.Jobs <= 0 {
		c.Jobs = 2000
	}
	if c.Clients <= 0 {
		c.Clients = 8
	}
	if c.CPUs <= 0 {
		c.CPUs = 2
	}
	if len(c.SlotUsers) == 0 {
		c.SlotUsers = []string{"sbxslot10", "sbxslot11", "sbxslot12"}
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

func (c *JobsConfig) validate() error {
	return needBinAndDir("bench jobs", c.Sitebox, c.WorkDir)
}

// JobsReport is the whole run: one phase per way of submitting.
type JobsReport struct {
	Config JobsConfig
	CPUs   int // the machine's, which clients and box share
	Phases []JobsPhase
}

// JobsPhase is N jobs submitted one way, then run to their end.
type JobsPhase struct {
	How      string
	Requests int // POSTs sent
	Conns    int // TCP connections the client opened (keep-alive: ≤ clients)
	Jobs     int
	// Accept is from the first request sent to the last 201 received.
	Accept time.Duration
	// StartSpan is first to last Started (the box's clock); DoneSpan is
	// first Submitted to last Finished, the phase end to end.
	StartSpan, DoneSpan time.Duration
	Started, Completed  int
	Failed              int    // ended in another state than completed
	FirstFailure        string // one failed job's reason, for the report
	TimedOut            bool   // the wait ended with jobs still queued or running
	// BoxCPU is the box process's CPU over the phase (AcceptCPU of it
	// while submissions came in); ChildCPU that of the job supervisors
	// and their jobs, reaped by the box during the phase.
	BoxCPU, AcceptCPU, ChildCPU time.Duration
	PeakRSS                     int64 // the box's VmHWM at the phase's end
}

// Jobs runs the benchmark: one box, phase "one request per job" with
// cfg.Clients clients, then with cfg.Batch phase "one submission". Each
// phase has its own token subject, so the poll lists only its own jobs
// and costs the box the same in both phases.
func Jobs(ctx context.Context, cfg JobsConfig) (*JobsReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "bench jobs: %d jobs per phase, %d clients, local domain %d CPUs\n", cfg.Jobs, cfg.Clients, cfg.CPUs)
	bx, err := startJobsBox(ctx, cfg.Sitebox, filepath.Join(cfg.WorkDir, "box"), cfg.CPUs, cfg.Clients, cfg.SlotUsers)
	if bx != nil {
		defer bx.proc.Stop()
	}
	if err != nil {
		return nil, err
	}
	rep := &JobsReport{Config: cfg, CPUs: runtime.NumCPU()}
	type phaseSpec struct {
		how, sub string
		perReq   int
	}
	phases := []phaseSpec{{fmt.Sprintf("one request per job, %d clients", cfg.Clients), "bench-each", 1}}
	if cfg.Batch {
		phases = append(phases, phaseSpec{fmt.Sprintf("one submission of %d jobs", cfg.Jobs), "bench-one", cfg.Jobs})
	}
	for _, ph := range phases {
		token, err := bx.token(ctx, ph.sub)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Out, "phase %q\n", ph.how)
		p, err := bx.phase(ctx, &cfg, token, ph.perReq)
		if err != nil {
			return nil, fmt.Errorf("bench jobs: %s: %w", ph.how, err)
		}
		p.How = ph.how
		rep.Phases = append(rep.Phases, *p)
		if p.TimedOut {
			break // the queue still holds this phase's jobs: the next would measure both
		}
	}
	return rep, nil
}

// jobsBox is the box under test and the one HTTP client of the run.
type jobsBox struct {
	proc   *peers.Process
	bin    string
	config string // its TOML file
	url    string // the job API
	client *http.Client
	dials  atomic.Int64 // connections opened: keep-alive must hold them
}

// jobsBoxConfig is the box's TOML: https:// with the site issuer, the job
// router with a local domain of cpus cores run by slots, sandboxes in
// sandboxes, nothing else.
func jobsBoxConfig(state, sandboxes string, port, cpus int, slots []string) string {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	q := make([]string, len(slots))
	for i, s := range slots {
		q[i] = strconv.Quote(s)
	}
	return fmt.Sprintf("[server]\nname = \"bench-jobs\"\nstate_dir = %q\nlog_level = \"warn\"\n\n[root]\naddr = \"off\"\n\n"+
		"[https]\naddr = %q\n\n[auth]\nsite_issuer = true\nissuer_url = %q\nsite_issuer_vos = [\"bench\"]\n\n[jobs]\nenabled = true\ncpus = %d\nslot_users = [%s]\ndir = %q\n",
		state, addr, "https://"+addr, cpus, strings.Join(q, ", "), sandboxes)
}

// startJobsBox writes the config into a fresh dir, makes the issuer key
// and starts the box. A non-nil box is returned whenever it was started.
func startJobsBox(ctx context.Context, bin, dir string, cpus, clients int, slots []string) (*jobsBox, error) {
	// A previous run's queue would be scheduled alongside this one's.
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("bench jobs: clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench jobs: %w", err)
	}
	port, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	bx := &jobsBox{bin: bin, config: filepath.Join(dir, "box.toml"), url: fmt.Sprintf("https://127.0.0.1:%d%s", port, jobsapi.Prefix)}
	state := filepath.Join(dir, "state")
	if bx.proc, err = startConfigBox(ctx, bin, bx.config, jobsBoxConfig(state, filepath.Join(dir, "sandboxes"), port, cpus, slots), true, []int{port}); err != nil {
		return nil, fmt.Errorf("bench jobs: start the box: %w", err)
	}
	tc, err := tlsutil.ClientConfig(filepath.Join(state, "tls", "cert.pem"), false)
	if err != nil {
		return bx, fmt.Errorf("bench jobs: the box's certificate: %w", err)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	// Enough idle connections for every client, so each request after a
	// client's first reuses its connection (no TLS handshake per job).
	bx.client = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		TLSClientConfig: tc, MaxIdleConns: clients + 4, MaxIdleConnsPerHost: clients + 4, IdleConnTimeout: time.Minute,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			bx.dials.Add(1)
			return dialer.DialContext(ctx, network, addr)
		},
	}}
	return bx, nil
}

// token issues a bearer token for subject sub with `sitebox token issue`.
func (b *jobsBox) token(ctx context.Context, sub string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, b.bin, "token", "issue", "--config", b.config, "--sub", sub, "--groups", "/bench", "--lifetime", "2h",
		"--scope", "compute.create compute.read compute.cancel")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("bench jobs: sitebox token issue: %w: %s", err, trimMsg(errb.Bytes()))
	}
	return strings.TrimSpace(out.String()), nil
}

// benchSpec is the job: nothing to do, so the figures are the router's.
func benchSpec() spec.Spec {
	return spec.Spec{Executable: "/bin/true", CPUs: 1, MemoryMB: 64, Domains: []string{"local"}}
}

// phase submits cfg.Jobs jobs, perReq per request from cfg.Clients
// clients, then waits until they have all ended, and measures.
func (b *jobsBox) phase(ctx context.Context, cfg *JobsConfig, token string, perReq int) (*JobsPhase, error) {
	pid := b.proc.Cmd.Process.Pid
	cpu0, err := b.proc.CPUTime()
	if err != nil {
		return nil, err
	}
	child0, err := childCPUTime(pid)
	if err != nil {
		return nil, err
	}
	dials0 := b.dials.Load()
	p := &JobsPhase{Jobs: cfg.Jobs, Requests: (cfg.Jobs + perReq - 1) / perReq}
	conc := min(cfg.Clients, p.Requests)
	ids, accept, err := b.submit(ctx, cfg.Out, token, cfg.Jobs, perReq, conc)
	if err != nil {
		return nil, err
	}
	p.Accept, p.Conns = accept, int(b.dials.Load()-dials0)
	cpuAcc, _ := b.proc.CPUTime()
	p.AcceptCPU = cpuAcc - cpu0
	fmt.Fprintf(cfg.Out, "  %d jobs accepted in %v (%d requests, %d connections)\n", len(ids), accept.Round(time.Millisecond), p.Requests, p.Conns)
	js, err := b.wait(ctx, cfg.Out, token, ids, cfg.Timeout)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	p.TimedOut = err != nil
	summarizeJobs(p, js)
	cpu1, _ := b.proc.CPUTime()
	child1, _ := childCPUTime(pid)
	p.BoxCPU, p.ChildCPU = cpu1-cpu0, child1-child0
	p.PeakRSS, _ = b.proc.PeakRSS()
	return p, nil
}

// submit POSTs n specs, perReq per request, from conc goroutines; it
// returns the job ids and the time from the first request to the last 201.
func (b *jobsBox) submit(ctx context.Context, out io.Writer, token string, n, perReq, conc int) ([]string, time.Duration, error) {
	nreq := (n + perReq - 1) / perReq
	bodies := make([][]byte, nreq)
	for r := range nreq {
		specs := make([]spec.Spec, min(perReq, n-r*perReq))
		for i := range specs {
			specs[i] = benchSpec()
		}
		var err error
		if bodies[r], err = json.Marshal(jobsapi.Submission{Specs: specs}); err != nil {
			return nil, 0, err
		}
	}
	got := make([][]string, nreq)
	var next, done atomic.Int64
	stop := progress(out, time.Second, func() string { return fmt.Sprintf("  accepted %d/%d requests", done.Load(), nreq) })
	defer stop()
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for range conc {
		g.Go(func() error {
			for r := int(next.Add(1) - 1); r < nreq; r = int(next.Add(1) - 1) {
				var res struct{ Jobs []jobs.Job }
				if err := b.call(gctx, http.MethodPost, token, bodies[r], http.StatusCreated, &res); err != nil {
					return fmt.Errorf("submission %d: %w", r, err)
				}
				for _, j := range res.Jobs {
					got[r] = append(got[r], j.ID)
				}
				done.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	accept := time.Since(start)
	var ids []string
	for _, g := range got {
		ids = append(ids, g...)
	}
	if len(ids) != n {
		return nil, 0, fmt.Errorf("the box accepted %d jobs, want %d", len(ids), n)
	}
	return ids, accept, nil
}

// wait polls the caller's jobs every 200 ms until all of ids have ended;
// on timeout it returns what it last saw and context.DeadlineExceeded.
func (b *jobsBox) wait(ctx context.Context, out io.Writer, token string, ids []string, timeout time.Duration) ([]jobs.Job, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var last []jobs.Job
	var ended, started atomic.Int64
	stop := progress(out, 2*time.Second, func() string {
		return fmt.Sprintf("  started %d, ended %d of %d", started.Load(), ended.Load(), len(ids))
	})
	defer stop()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		var res struct{ Jobs []jobs.Job }
		if err := b.call(ctx, http.MethodGet, token, nil, http.StatusOK, &res); err != nil {
			if ctx.Err() != nil && last != nil {
				return last, ctx.Err()
			}
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		last = last[:0]
		var e, s int64
		for _, j := range res.Jobs {
			if want[j.ID] {
				last = append(last, j)
				if j.State.Final() {
					e++
				}
				if !j.Started.IsZero() {
					s++
				}
			}
		}
		ended.Store(e)
		started.Store(s)
		if int(e) == len(ids) {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-t.C:
		}
	}
}

// call sends one API request; a status other than want is an error
// carrying the box's message.
func (b *jobsBox) call(ctx context.Context, method, token string, body []byte, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, b.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body) // read whole, so the connection is reused
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", method, jobsapi.Prefix, resp.Status, trimMsg(data))
	}
	return json.Unmarshal(data, out)
}

// progress prints line() every period until the returned stop is called.
func progress(out io.Writer, period time.Duration, line func() string) (stop func()) {
	return every(period, func() { fmt.Fprintln(out, line()) })
}
