package doctor

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/jobs"
	"sitebox/test/peers"
)

func slurmConfig(t *testing.T, conf, partition string) *config.Config {
	cfg := baseConfig(t, config.Off, config.Off)
	cfg.Jobs.Enabled = true
	cfg.Jobs.Domains = []jobs.DomainSettings{{Name: "site", Type: "slurm", SlurmConf: conf, Partition: partition}}
	return cfg
}

func TestSlurmFake(t *testing.T) {
	for _, tc := range []struct {
		name  string
		out   string
		err   error
		want  Status
		texts []string
	}{
		{"healthy", "3 idle\n1 mixed\n", nil, StatusOK, []string{"4 nodes in partition t3 (3 idle, 1 mixed)"}},
		{"some down", "3 idle\n1 down*\n", nil, StatusWarn, []string{"4 nodes in partition t3, 1 unavailable", "sinfo -R"}},
		{"all drained", "2 drained\n", nil, StatusError, []string{"all 2 nodes", "scontrol update"}},
		{"no nodes", "", nil, StatusError, []string{"no nodes in partition t3"}},
		{"controller down", "sinfo: error: slurm_load_partitions: Unable to contact slurm controller (connect failure)\n", errors.New("exit status 1"),
			StatusError, []string{"Unable to contact slurm controller", "slurmctld", "6817", "/etc/slurm-site.conf"}},
		{"munge", "sinfo: error: If munged is up, restart with --num-threads=10\nsinfo: error: Munge encode failed: Failed to access \"/run/munge/munge.socket.2\": No such file or directory\n", errors.New("exit status 1"),
			StatusError, []string{"Munge encode failed", "munge.key", "unmunge"}},
		{"no config", "sinfo: fatal: Could not establish a configuration source\n", errors.New("exit status 1"),
			StatusError, []string{"slurm.conf", "slurm_conf"}},
		{"not installed", "", &exec.Error{Name: "sinfo", Err: exec.ErrNotFound}, StatusError, []string{"sinfo is not installed", "slurm-client"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gotEnv, gotArgs []string
			o := Options{RunCommand: func(_ context.Context, env []string, name string, args ...string) ([]byte, error) {
				gotEnv, gotArgs = env, append([]string{name}, args...)
				return []byte(tc.out), tc.err
			}}.withDefaults()
			cs := checkSlurm(context.Background(), slurmConfig(t, "/etc/slurm-site.conf", "t3"), o)
			mustHave(t, cs[0], tc.want, append(tc.texts, "domain site")...)
			if !slices.Equal(gotEnv, []string{"SLURM_CONF=/etc/slurm-site.conf"}) || !slices.Contains(gotArgs, "--partition=t3") {
				t.Errorf("ran %v with env %v", gotArgs, gotEnv)
			}
		})
	}
}

func TestSlurmNone(t *testing.T) {
	cs := checkSlurm(context.Background(), baseConfig(t, config.Off, config.Off), Options{}.withDefaults())
	mustHave(t, cs[0], StatusSkip, "no [[jobs.domain]] of type slurm")
}

// TestSlurmReal runs sinfo against a private Slurm (munged, slurmctld,
// slurmd on 127.0.0.1). A stopped controller is left to the fake cases:
// sinfo retries it for about 10 s.
func TestSlurmReal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm")
	}
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sinfo"} {
		peers.Require(t, tool)
	}
	s, err := peers.StartSlurm(context.Background(), peers.SlurmConfig{WorkDir: filepath.Join(t.TempDir(), "slurm"), CPUs: 2, MemoryMB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	cfg := slurmConfig(t, s.Conf, s.Partition)
	o := Options{Timeout: 20 * time.Second}.withDefaults()
	cs := checkSlurm(context.Background(), cfg, o)
	mustHave(t, cs[0], StatusOK, "1 node in partition "+s.Partition, "idle")
}
