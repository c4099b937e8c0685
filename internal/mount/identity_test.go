package mount

import (
	"os"
	"strings"
	"testing"

	"sitebox/internal/outbound"
	"sitebox/internal/remote"
)

// Callers without a credential share the anonymous view; clients past
// the cap are closed least recently used first, but never one with
// files open.
func TestPerCallerClients(t *testing.T) {
	closed := 0
	p := &PerCaller{MaxClients: 1, Dial: func(Credential) (remote.Client, error) {
		return &fakeClient{closed: &closed}, nil
	}}
	a, err := p.view("k1", dialer(p))
	if err != nil {
		t.Fatal(err)
	}
	a.refs.Add(1) // a file open
	if _, err := p.view("k2", dialer(p)); err != nil {
		t.Fatal(err)
	}
	if closed != 0 {
		t.Fatal("a client with a file open was closed")
	}
	a.refs.Add(-1)
	p.view("k3", dialer(p))
	if closed != 2 {
		t.Errorf("%d clients closed past the cap of 1, want 2", closed)
	}
	p.Close()
}

// A uid whose token file is not its own is refused with the reason, not
// served anonymously.
func TestCallerCredentialRefused(t *testing.T) {
	uid := os.Getuid() + 12345 // nobody real owns the file below for it
	name := outbound.UserTokenFiles(outbound.OtherUserEnv(uid), uid)[1]
	if err := os.WriteFile(name, []byte("planted"), 0o600); err != nil {
		t.Fatalf("cannot write %s: %v", name, err)
	}
	defer os.Remove(name)
	p := &PerCaller{}
	if _, err := p.For(uint32(uid)); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Errorf("a planted token file: %v", err)
	}
}

func dialer(p *PerCaller) func() (backend, error) {
	return func() (backend, error) {
		c, err := p.Dial(Credential{})
		return backend{meta: c, data: c, close: c}, err
	}
}

type fakeClient struct {
	remote.Client
	closed *int
}

func (f *fakeClient) Close() error { *f.closed++; return nil }

// A caller's Kerberos credential cache is theirs only when they own it
// and nobody else may read it; it keys a view of its own.
func TestCallerCCache(t *testing.T) {
	uid := os.Getuid() + 12346 // nobody real owns the file below for it
	name := outbound.UserCCachePath(uid)
	if err := os.WriteFile(name, []byte("planted"), 0o600); err != nil {
		t.Fatalf("cannot write %s: %v", name, err)
	}
	defer os.Remove(name)
	p := &PerCaller{}
	if _, err := p.For(uint32(uid)); err == nil || !strings.Contains(err.Error(), name+" does not belong") {
		t.Errorf("a planted credential cache: %v", err)
	}
	// The rest gives a file to another uid, which only root may do.
	if os.Geteuid() != 0 {
		return
	}
	other := uid + 1
	own := outbound.UserCCachePath(other)
	if err := os.WriteFile(own, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(own)
	os.Chown(own, other, other)
	if _, err := findCallerCredential(other); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a readable credential cache: %v", err)
	}
	os.Chmod(own, 0o600)
	f, err := findCallerCredential(other)
	if err != nil || f.ccache != own || !strings.Contains(f.key(other), "krb5 "+own) {
		t.Errorf("the caller's own cache: %+v (key %q), %v", f, f.key(other), err)
	}
}
