package box

import (
	"fmt"
	"net/http"
	"strings"
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
	"sitebox/internal/outbound"
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
		tf, err := outbound.LoadTokenFile(jc.StageTokenFile, b.log)
		if err != nil {
			return fmt.Errorf("jobs.stage_token_file: %w", err)
		}
		st.Token = tf.Token
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
		token := outbound.NewTokenFile(d.TokenFile, 0, b.log).Get
		return &partner.Backend{API: jobsapi.Client{URL: d.URL, HTTP: hc, Token: token}}, nil
	case "htcondor":
		return &htcondor.Backend{}, nil
	}
	return nil, fmt.Errorf("unknown domain type %q", d.Type)
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
