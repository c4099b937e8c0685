package staging

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/jobs"
	"sitebox/internal/store"
)

// boxStager stages in a box exporting /store under sitePolicy, which
// calls itself box.example:1094 and box.example:8443.
func boxStager(t *testing.T) (*Stager, string, *accessLines, *logBuffer) {
	t.Helper()
	o, pool := siteOrigin(t)
	p := sitePolicy(t)
	acc, logs := &accessLines{}, &logBuffer{}
	s := &Stager{Local: auth.NewGuard(o, p, nil), Policy: p, Access: acc, Log: logs.logger(),
		Self: func(hp string) bool { return hp == "box.example:1094" || hp == "box.example:8443" }}
	return s, pool, acc, logs
}

// A job stages with its owner's rights: bob, whose token allows jobs and
// no storage, cannot read alice's private file through the box, whether
// he names it by federation path or by a URL of the box, nor overwrite
// her delivered output; alice can do both with hers.
func TestStagingActsAsTheOwner(t *testing.T) {
	s, pool, _, _ := boxStager(t)
	ctx := context.Background()
	for _, from := range []string{
		"/store/user/alice/private.txt",
		"roots://box.example:1094//store/user/alice/private.txt",
		"root://box.example:1094//store/user/alice/private.txt",
		"https://box.example:8443/store/user/alice/private.txt",
	} {
		dst := filepath.Join(t.TempDir(), "private.txt")
		err := s.Fetch(ctx, bob, input(from), dst)
		if !errors.Is(err, store.ErrPermission) || !strings.Contains(err.Error(), "bob") {
			t.Errorf("bob staged %s: %v; want a refusal naming bob", from, err)
		}
		mustNotExist(t, dst)
		if err := s.Fetch(ctx, alice, input(from), dst); err != nil {
			t.Errorf("alice staging her own %s: %v", from, err)
		} else if b, _ := os.ReadFile(dst); string(b) != "alice's secret\n" {
			t.Errorf("alice got %q from %s", b, from)
		}
	}

	src := filepath.Join(t.TempDir(), "result.txt")
	os.WriteFile(src, []byte("bob's forgery\n"), 0o644)
	for _, dest := range []string{"roots://box.example:1094//store/jobsout/alice/", "/store/jobsout/alice", "https://box.example:8443/store/jobsout/alice/"} {
		err := s.Deliver(ctx, bob, src, dest, "result.txt")
		if !errors.Is(err, store.ErrPermission) {
			t.Errorf("bob delivered to %s: %v; want a refusal", dest, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(pool, "jobsout/alice/result.txt")); string(b) != "alice's result\n" {
		t.Errorf("alice's output was overwritten: %q", b)
	}
	// alice may create below her area, not replace (no modify scope).
	if err := s.Deliver(ctx, alice, src, "/store/jobsout/alice", "new.txt"); err != nil {
		t.Errorf("alice delivering a new output: %v", err)
	}
	if err := s.Deliver(ctx, alice, src, "/store/jobsout/alice", "result.txt"); !errors.Is(err, store.ErrPermission) {
		t.Errorf("alice replaced a file with a create-only scope: %v", err)
	}
}

// A job recorded before jobs kept their owner's rights stages as an
// identity with none: public data only.
func TestStagingWithoutRightsIsPublicOnly(t *testing.T) {
	s, _, _, _ := boxStager(t)
	legacy := (&jobs.Job{ID: "1.0", Owner: "alice", Issuer: siteIssuer}).StageOwner()
	err := s.Fetch(context.Background(), legacy, input("/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "x"))
	if !errors.Is(err, store.ErrPermission) {
		t.Fatalf("a job without rights staged a protected file: %v", err)
	}
}

// Every staging transfer is one access-log line and one log line naming
// the job's owner (issuer and subject) and the job, refused ones too.
func TestStagingLogsNameTheOwner(t *testing.T) {
	s, _, acc, logs := boxStager(t)
	ctx := context.Background()
	s.Fetch(ctx, alice, input("/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "a"))
	s.Fetch(ctx, bob, input("roots://box.example:1094//store/user/alice/private.txt"), filepath.Join(t.TempDir(), "b"))
	src := filepath.Join(t.TempDir(), "out")
	os.WriteFile(src, []byte("out\n"), 0o644)
	s.Deliver(ctx, alice, src, "/store/jobsout/alice", "out.txt")

	es := acc.all()
	if len(es) != 3 {
		t.Fatalf("%d access-log lines for 3 transfers: %+v", len(es), es)
	}
	for i, want := range []struct{ sub, iss, job, op, path, result string }{
		{"alice", siteIssuer, "job:7.0", "stage-in", "/store/user/alice/private.txt", "ok"},
		{"bob", foreignIssuer, "job:8.0", "stage-in", "/store/user/alice/private.txt", "denied"},
		{"alice", siteIssuer, "job:7.0", "stage-out", "/store/jobsout/alice/out.txt", "ok"},
	} {
		e := es[i]
		if e.Subject != want.sub || e.Issuer != want.iss || e.Client != want.job || e.Op != want.op || e.Path != want.path || e.Proto != "job" || e.VO != "cms" {
			t.Errorf("line %d: %+v; want %+v", i, e, want)
		}
		if (want.result == "ok") != (e.Result == "ok") {
			t.Errorf("line %d result %q, want %s", i, e.Result, want.result)
		}
	}
	if es[0].Bytes != int64(len("alice's secret\n")) {
		t.Errorf("bytes %d", es[0].Bytes)
	}
	out := logs.String()
	for _, want := range []string{"job=7.0 owner=alice issuer=" + siteIssuer, "job=8.0 owner=bob issuer=" + foreignIssuer, "op=stage-out"} {
		if !strings.Contains(out, want) {
			t.Errorf("the box log lacks %q:\n%s", want, out)
		}
	}
}
