package config

import (
	"strings"
	"testing"
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
