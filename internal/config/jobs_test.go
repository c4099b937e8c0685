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
