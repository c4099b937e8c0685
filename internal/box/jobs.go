package box

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/jobs/backend/htcondor"
	"sitebox/internal/jobs/backend/partner"
	"sitebox/internal/jobs/backend/slurm"
	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/staging"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
)

// buildJobs makes the job router when [jobs] is enabled: the local
// domain on this box's cores, the other configured domains, and staging
// that acts as each job's owner (internal/jobs/staging).
func (b *Box) buildJobs() error {
	jc := b.cfg.Jobs
	if !jc.Enabled {
		return nil
	}
	st := &staging.Stager{Local: b.store, Self: b.isSelf, Cache: jc.Cache, Policy: b.policy, Allow: b.cfg.TPC.Policy(),
		CAFile: jc.StageCA, Log: b.log.With("component", "staging"), Access: accesslog.SinkFunc(b.accessLine)}
	if b.director != nil && b.dirStore == nil {
		// The box's namespace is its director's, which answers with
		// redirects: staging follows them over the network instead.
		st.Local, st.Self = nil, nil
	}
	if jc.StageTokenFile != "" {
		if _, err := readToken(jc.StageTokenFile); err != nil {
			return fmt.Errorf("jobs.stage_token_file: %w", err)
		}
		st.Token = tokenFile(jc.StageTokenFile, b.log)
	}
	deps := jobs.Deps{Log: b.log.With("component", "jobs"), StateDir: b.cfg.Server.StateDir, Stager: st, Backend: b.jobBackend}
	if b.issuer != nil {
		deps.LegacyIssuer = b.issuer.URL()
	}
	svc, err := jobs.New(jc, deps)
	if err != nil {
		return err
	}
	b.jobs = svc
	b.closers = append(b.closers, svc.Close)
	return nil
}

// accessLine writes e to the access log, once the frontends have opened
// it.
func (b *Box) accessLine(e accesslog.Entry) {
	if b.access != nil {
		b.access.Transfer(e)
	}
}

func (b *Box) jobBackend(d jobs.DomainSettings) (jobs.Backend, error) {
	switch d.Type {
	case "slurm":
		var env []string
		if d.SlurmConf != "" {
			env = append(env, "SLURM_CONF="+d.SlurmConf)
		}
		runAs, err := local.LookupSlots([]string{d.RunAs})
		if err != nil {
			return nil, fmt.Errorf("run_as: %w", err)
		}
		return slurm.New(slurm.Config{Partition: d.Partition, Env: env, RunAs: runAs[0], Log: b.log.With("component", "slurm")}), nil
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
		return &partner.Backend{API: jobsapi.Client{URL: d.URL, HTTP: hc, Token: token}}, nil
	case "htcondor":
		return &htcondor.Backend{}, nil
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
	api := &jobsapi.API{Svc: b.jobs, Auth: b.authn, Certificate: b.jobsCertificate(), Log: b.log.With("component", "jobs"),
		Local: func(id *store.Identity) bool {
			return id.Is(auth.MethodKrb5) || b.isSiteUser(id) || local[strings.TrimSuffix(id.Issuer, "/")]
		}}
	return api.Handler()
}
