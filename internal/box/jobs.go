package box

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/jobs"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/transfer"
	"sitebox/internal/units"
)

// buildJobs makes the job router when [jobs] is enabled: the local
// domain on this box's cores, the other configured domains, staging
// through the site cache with the box's own token.
func (b *Box) buildJobs() error {
	jc := &b.cfg.Jobs
	if !jc.Enabled {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	slots, err := jobs.LookupSlots(jc.SlotUsers)
	if err != nil {
		return fmt.Errorf("jobs.slot_users: %w", err)
	}
	// Jobs run as slot users: the state dir (keys, databases) is the
	// box's alone.
	if err := os.Chmod(b.cfg.Server.StateDir, 0o700); err != nil {
		return fmt.Errorf("jobs: make the state dir the box's alone: %w", err)
	}
	cfg := jobs.Config{
		Dir: jc.Dir, DBPath: filepath.Join(b.cfg.Server.StateDir, "jobs.db"),
		CPUs: jc.CPUs, GridMaxCPUs: jc.GridMaxCPUs, Self: self, Shares: jc.Shares,
		Slots: slots,
	}
	if b.issuer != nil {
		cfg.LegacyIssuer = b.issuer.URL()
	}
	if jc.Memory != "" {
		n, _ := units.ParseSize(jc.Memory)
		cfg.MemoryMB = n >> 20
	}
	cfg.HalfLife, _ = time.ParseDuration(jc.HalfLife)
	cfg.PreemptGrace, _ = time.ParseDuration(jc.PreemptGrace)
	st := &jobs.TransferStager{Cache: jc.Cache, Opts: transfer.Options{CAFile: jc.StageCA}}
	if jc.StageTokenFile != "" {
		if _, err := readToken(jc.StageTokenFile); err != nil {
			return fmt.Errorf("jobs.stage_token_file: %w", err)
		}
		st.Opts.TokenFunc = tokenFile(jc.StageTokenFile, b.log)
	}
	cfg.Stager = st
	for _, d := range jc.Domains {
		be, err := b.jobBackend(d)
		if err != nil {
			return fmt.Errorf("jobs.domain %s: %w", d.Name, err)
		}
		cfg.Domains = append(cfg.Domains, jobs.Domain{Name: d.Name, Backend: be, MaxJobs: d.MaxJobs, MaxIdleJobs: d.MaxIdleJobs})
	}
	svc, err := jobs.New(cfg, b.log.With("component", "jobs"))
	if err != nil {
		return err
	}
	b.jobs = svc
	b.closers = append(b.closers, svc.Close)
	return nil
}

func (b *Box) jobBackend(d config.JobDomain) (jobs.Backend, error) {
	switch d.Type {
	case "slurm":
		var env []string
		if d.SlurmConf != "" {
			env = append(env, "SLURM_CONF="+d.SlurmConf)
		}
		runAs, err := jobs.LookupSlots([]string{d.RunAs})
		if err != nil {
			return nil, fmt.Errorf("run_as: %w", err)
		}
		return jobs.NewSlurm(jobs.SlurmBackendConfig{Partition: d.Partition, Env: env, RunAs: runAs[0], Log: b.log.With("component", "slurm")}), nil
	case "box":
		hc, err := tlsutil.HTTPClient(d.CA, false, time.Minute)
		if err != nil {
			return nil, err
		}
		// Polls ask once per job every few seconds: the file is re-read
		// at most once a minute; until it has been read once, the read
		// error is the answer.
		file, cached := d.TokenFile, tokenFile(d.TokenFile, b.log)
		token := func() (string, error) {
			if tok := cached(); tok != "" {
				return tok, nil
			}
			return readToken(file)
		}
		return &jobs.BoxBackend{API: jobs.Client{URL: d.URL, HTTP: hc, Token: token}}, nil
	case "htcondor":
		return &jobs.HTCondorBackend{}, nil
	}
	return nil, fmt.Errorf("unknown domain type %q", d.Type)
}

// tokenReread is how long a token read from a file is used before the
// file is read again.
var tokenReread = time.Minute

// tokenFile returns the token in file, re-read at most once a minute so a
// renewed token (htgettoken, oidc-agent, a cron job) is picked up; the
// last good one stays in use while the file cannot be read.
func tokenFile(file string, log *slog.Logger) func() string {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var mu sync.Mutex
	var tok string
	var read time.Time
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(read) < tokenReread && tok != "" {
			return tok
		}
		read = time.Now()
		t, err := readToken(file)
		if err != nil {
			log.Warn("cannot read the token file; keeping the last token", "file", file, "err", err)
			return tok
		}
		tok = t
		return tok
	}
}

// readToken reads a token file (re-read on every use, so a renewed token
// is picked up).
func readToken(file string) (string, error) {
	if file == "" {
		return "", fmt.Errorf("no token file configured")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", file)
	}
	return t, nil
}

// jobsAPI is the submit API, authenticated with the box's verifier.
func (b *Box) jobsAPI() http.Handler {
	local := map[string]bool{}
	for _, is := range b.cfg.Jobs.LocalIssuers {
		local[strings.TrimSuffix(is, "/")] = true
	}
	if b.issuer != nil {
		local[b.issuer.URL()] = true
	}
	api := &jobs.API{Svc: b.jobs, Verify: b.jobsVerify(), Negotiate: b.jobsNegotiate(), Log: b.log.With("component", "jobs"),
		Local: func(id *store.Identity) bool { return isKerberos(id) || local[strings.TrimSuffix(id.Issuer, "/")] }}
	return api.Handler()
}
