package htcondor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/jobs"
)

// fakeCondor puts condor_* scripts on PATH that print what the test
// says and log their arguments (HTCondor itself is not packaged for
// Debian 12).
func fakeCondor(t *testing.T, scripts map[string]string) string {
	dir := t.TempDir()
	logf := filepath.Join(dir, "calls")
	for name, out := range scripts {
		body := "#!/bin/sh\necho \"" + name + " $*\" >> " + logf + "\n" + out + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return logf
}

// The box's job id goes into the job ad; Find looks it up in condor_q,
// then condor_history, skipping earlier attempts.
func TestFind(t *testing.T) {
	logf := fakeCondor(t, map[string]string{
		"condor_submit":  "echo '41.0 - 41.0'",
		"condor_q":       "echo '40 0'",
		"condor_history": "echo '39 0'; echo '41 0'",
	})
	h := &Backend{}
	ctx := context.Background()
	sandbox := t.TempDir()
	if id, err := h.Submit(ctx, &jobs.Job{ID: "7.3", SandboxDir: sandbox}); err != nil || id != "41.0" {
		t.Fatalf("submit: %q %v", id, err)
	}
	if b, _ := os.ReadFile(filepath.Join(sandbox, "job.sub")); !strings.Contains(string(b), `+SiteboxJob = "7.3"`) {
		t.Errorf("submit file lacks the box's id:\n%s", b)
	}
	if id, err := h.Find(ctx, &jobs.Job{ID: "7.3"}); err != nil || id != "40.0" {
		t.Errorf("find in condor_q: %q %v", id, err)
	}
	if id, err := h.Find(ctx, &jobs.Job{ID: "7.3", Remotes: []string{"40.0", "39.0"}}); err != nil || id != "41.0" {
		t.Errorf("find in condor_history: %q %v", id, err)
	}
	if id, err := h.Find(ctx, &jobs.Job{ID: "7.3", Remotes: []string{"39.0", "40.0", "41.0"}}); err != nil || id != "" {
		t.Errorf("find with every job an earlier attempt: %q %v", id, err)
	}
	if _, err := h.Find(ctx, &jobs.Job{ID: `1" || true`}); err == nil {
		t.Error("a forged id reached the constraint")
	}
	calls, _ := os.ReadFile(logf)
	if !strings.Contains(string(calls), `condor_q -constraint SiteboxJob == "7.3" -af ClusterId ProcId`) {
		t.Errorf("calls:\n%s", calls)
	}
}
