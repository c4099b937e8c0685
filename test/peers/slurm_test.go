package peers

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSlurmRunsABatchJob starts a private Slurm, runs one job through it
// and checks that Stop leaves neither daemons nor job processes behind.
func TestSlurmRunsABatchJob(t *testing.T) {
	Require(t, "slurmctld")
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Now()
	s, err := StartSlurm(ctx, SlurmConfig{WorkDir: filepath.Join(dir, "slurm"), CPUs: 2, MemoryMB: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	t.Logf("StartSlurm took %v (node %s, slurmctld :%d, slurmd :%d, munge %s)", time.Since(t0), s.Node, s.SlurmctldPort, s.SlurmdPort, s.MungeSocket)

	out := filepath.Join(dir, "out")
	b, err := s.Command(ctx, "sbatch", "--parsable", "-o", out, "--wrap", "echo hello").CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v: %s", err, b)
	}
	id := strings.TrimSpace(string(b))
	var acct string
	err = waitFor(ctx, 30*time.Second, func() bool {
		b, _ := s.Command(ctx, "sacct", "-c", "-X", "-n", "-P", "-j", id, "-o", "JobID,State").Output()
		acct = strings.TrimSpace(string(b))
		return acct != ""
	})
	if err != nil || acct != id+"|COMPLETED" {
		t.Fatalf("sacct -c for job %s: %q (%v)", id, acct, err)
	}
	t.Logf("job %s in accounting %v after start", id, time.Since(t0))
	if got, _ := os.ReadFile(out); string(got) != "hello\n" {
		t.Errorf("job output %q, want hello", got)
	}

	// A job still running at Stop must not outlive the instance.
	b, err = s.Command(ctx, "sbatch", "--parsable", "-o", "/dev/null", "--wrap", "sleep 300").CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v: %s", err, b)
	}
	waitFor(ctx, 20*time.Second, func() bool { return stepsOf(s) > 0 })
	if stepsOf(s) == 0 {
		t.Fatal("the sleep job never started")
	}
	t1 := time.Now()
	s.Stop()
	t.Logf("Stop with a running job took %v", time.Since(t1))
	if n := stepsOf(s); n != 0 {
		t.Errorf("%d slurmstepd left after Stop", n)
	}
	for _, port := range []int{s.SlurmctldPort, s.SlurmdPort} {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			t.Errorf("port %d still open after Stop", port)
		}
	}
}

// stepsOf counts the live slurmstepd processes of s.
func stepsOf(s *Slurm) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range procs {
		comm, _ := os.ReadFile(d + "/comm")
		st, _ := os.ReadFile(d + "/stat")
		if strings.TrimSpace(string(comm)) != "slurmstepd" || strings.Contains(string(st), ") Z ") {
			continue
		}
		fds, _ := filepath.Glob(d + "/fd/*")
		for _, fd := range fds {
			if l, _ := os.Readlink(fd); strings.HasPrefix(l, s.logDir) {
				n++
				break
			}
		}
	}
	return n
}

func TestStartSlurmNeedsWorkDir(t *testing.T) {
	Require(t, "slurmctld")
	if _, err := StartSlurm(context.Background(), SlurmConfig{}); err == nil || !strings.Contains(err.Error(), "WorkDir") {
		t.Fatalf("err = %v, want one naming WorkDir", err)
	}
}

func TestSlurmConfText(t *testing.T) {
	s := &Slurm{Node: "n1", Partition: SlurmPartition, SlurmctldPort: 7001, SlurmdPort: 7002, MungeSocket: "/w/run/munge.socket"}
	conf := slurmConfText(SlurmConfig{CPUs: 4, MemoryMB: 1000}, s, "/w")
	for _, want := range []string{
		"SlurmctldPort=7001\n", "SlurmdPort=7002\n", "AuthInfo=socket=/w/run/munge.socket\n",
		"JobCompType=jobcomp/filetxt\n", "JobCompLoc=/w/jobcomp.txt\n", "StateSaveLocation=/w/state\n",
		"SlurmdSpoolDir=/w/spool\n", "ProctrackType=proctrack/linuxproc\n", "TaskPlugin=task/none\n",
		"NodeName=n1 NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN\n",
		"PartitionName=sitebox Nodes=ALL Default=YES",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("slurm.conf lacks %q:\n%s", want, conf)
		}
	}
}

func TestStartSlurmNamesMissingPackages(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := StartSlurm(context.Background(), SlurmConfig{WorkDir: t.TempDir()})
	if err == nil {
		t.Fatal("started without binaries")
	}
	for _, want := range []string{"munged (Debian package munge)", "slurmctld (Debian package slurm-wlm)", "apt-get install -y slurm-wlm munge"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
