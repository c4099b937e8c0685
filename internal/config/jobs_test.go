package config

import (
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs"
)

// A job router must say which slot users run its jobs, keep sandboxes
// out of the state dir, and give Slurm jobs an account of their own.
func TestJobsNeverRunAsTheBox(t *testing.T) {
	for _, c := range []struct{ name, conf, want string }{
		{"no slot users", "[jobs]\nenabled = true\n", "jobs never run as the box's user: set [jobs] slot_users"},
		{"sandboxes in the state dir", "[server]\nstate_dir = \"/var/lib/sb\"\n[jobs]\nenabled = true\nslot_users = [\"s1\"]\ndir = \"/var/lib/sb/jobs\"\n", "inside the state dir"},
		{"slurm without run_as", "[jobs]\nenabled = true\nslot_users = [\"s1\"]\n[[jobs.domain]]\nname = \"site\"\ntype = \"slurm\"\n", "run_as"},
		{"slurm as a slot user", "[jobs]\nenabled = true\nslot_users = [\"s1\"]\n[[jobs.domain]]\nname = \"site\"\ntype = \"slurm\"\nrun_as = \"s1\"\n", "also a slot user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("jobs.toml", []byte(c.conf))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want a problem naming %q", err, c.want)
			}
		})
	}
	cfg, _, err := Parse("ok.toml", []byte("[server]\nstate_dir = \"/var/lib/sb\"\n[auth]\nsite_issuer = true\n[jobs]\nenabled = true\nslot_users = [\"s1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyDefaults("box", true)
	if cfg.Jobs.Dir != "/var/lib/sb-jobs" {
		t.Errorf("default jobs dir %q, want /var/lib/sb-jobs beside the state dir", cfg.Jobs.Dir)
	}
}

// A domain's attributes for requirements: the known ones, of their
// types; HasSingularity is the box's to say.
func TestJobDomainAttributes(t *testing.T) {
	base := "[auth]\nsite_issuer = true\n[jobs]\nenabled = true\nslot_users = [\"s1\"]\n[[jobs.domain]]\nname = \"site\"\ntype = \"htcondor\"\n"
	if _, _, err := Parse("ok.toml", []byte(base+"attributes = { OpSys = \"LINUX\", Arch = \"X86_64\", Cpus = 512, Memory = 64000 }\n")); err != nil {
		t.Errorf("good attributes: %v", err)
	}
	for _, c := range []struct{ attrs, want string }{
		{`{ Memory = "lots" }`, "Memory must be a whole number"},
		{`{ OpSys = 7 }`, "OpSys must be a string"},
		{`{ HasSingularity = true }`, "HasSingularity cannot be set"},
		{`{ GLIDEIN_Site = "x" }`, `"GLIDEIN_Site" is not an attribute`},
	} {
		_, _, err := Parse("bad.toml", []byte(base+"attributes = "+c.attrs+"\n"))
		if err == nil || !strings.Contains(err.Error(), "attributes") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.attrs, err)
		}
	}
}

// [jobs] sizes and durations are read as the file is decoded, each
// problem in the type's own words at its line; sandbox_retention also
// takes "forever".
func TestJobsTypedMessages(t *testing.T) {
	text := `[auth]
site_issuer = true
[jobs]
enabled = true
slot_users = ["s1"]
memory = "x"
half_life = "a day"
preempt_grace = 30
sandbox_retention = "-1h"
`
	ps := problemsIn(t, "jobs.toml", text)
	want := []string{
		`line 6: jobs.memory: "x" is not a size (examples: 1GiB, 512MiB, 50MB, 4096)`,
		`line 7: jobs.half_life: "a day" is not a duration (examples: 30s, 10m, 1h)`,
		`line 8: jobs.preempt_grace: want a duration in quotes (e.g. "30s"), found the number 30`,
		`line 9: jobs.sandbox_retention: "-1h" is not a positive duration (e.g. "168h") or "forever"`,
	}
	wantProblems(t, ps, want...)
	if len(ps.List) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(ps.List), len(want), ps)
	}

	cfg, _, err := Parse("ok.toml", []byte("[auth]\nsite_issuer = true\n[jobs]\nenabled = true\nslot_users = [\"s1\"]\nmemory = \"16GiB\"\nsandbox_retention = \"forever\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyDefaults("box", true)
	if j := cfg.Jobs; j.Memory != 16<<30 || j.SandboxRetention != jobs.Forever || j.HalfLife.D() != 24*time.Hour || j.PreemptGrace.D() != 30*time.Second {
		t.Errorf("jobs settings %+v", j)
	}
}
