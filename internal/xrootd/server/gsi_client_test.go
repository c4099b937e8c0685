package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/x509grid"
	"sitebox/internal/xrootd/client"
)

// proxySwitch is an Options.Proxy whose credential the test replaces,
// as a proxy file renewed on disk is.
type proxySwitch struct {
	mu  sync.Mutex
	cur *x509grid.Credential
	err error
}

func (s *proxySwitch) get() (*x509grid.Credential, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.err
}

func (s *proxySwitch) set(c *x509grid.Credential, err error) {
	s.mu.Lock()
	s.cur, s.err = c, err
	s.mu.Unlock()
}

// The root:// client logs in with gsi when the server offers it and a
// proxy is given; once the proxy changes, the next request goes over a
// new connection with the new one, while a file opened before reads on.
func TestClientGSIProxy(t *testing.T) {
	p := sharedGSIPKI(t)
	addr, _ := voServer(t, p)
	cred := func(user string) *x509grid.Credential {
		return &x509grid.Credential{Chain: p.users[user], Key: p.userKey, Subject: "/CN=" + user}
	}
	sw := &proxySwitch{}
	sw.set(cred("Alice"), nil)
	fs := client.NewFSOptions(addr, client.Options{Options: outbound.Options{Proxy: sw.get, GridRoots: p.roots}})
	defer fs.Close()
	ctx := context.Background()

	if _, err := fs.Stat(ctx, "/vo/f"); err != nil {
		t.Fatalf("alice (/testvo) over gsi: %v", err)
	}
	f, err := fs.Open(ctx, "/vo/f")
	if err != nil {
		t.Fatal(err)
	}
	sw.set(cred("Plain"), nil)
	if _, err := fs.Stat(ctx, "/vo/f"); !errors.Is(err, store.ErrPermission) {
		t.Errorf("after the proxy became Plain's (no VO): %v, want refused", err)
	}
	buf := make([]byte, 7)
	if n, err := f.ReadAt(buf, 0); n != 7 || string(buf) != "vo data" {
		t.Errorf("the file opened with the previous proxy: %d %v", n, err)
	}
	f.Close()
	sw.set(cred("Alice"), nil)
	if _, err := fs.Stat(ctx, "/vo/f"); err != nil {
		t.Errorf("alice again: %v", err)
	}

	// An unusable proxy: the server's offer and the reason are named.
	sw.set(nil, errors.New("the proxy expired at noon"))
	_, err = fs.Stat(ctx, "/vo/f")
	if err == nil || !strings.Contains(err.Error(), "the proxy expired at noon") {
		t.Errorf("an expired proxy: %v, want the reason named", err)
	}
}

// The server's host certificate must chain to GridRoots: another CA's
// server is refused before the proxy is used.
func TestClientGSIUnknownServer(t *testing.T) {
	p := sharedGSIPKI(t)
	addr, _ := voServer(t, p)
	other, err := newGSIPKI()
	if err != nil {
		t.Fatal(err)
	}
	c := &x509grid.Credential{Chain: p.users["Alice"], Key: p.userKey}
	fs := client.NewFSOptions(addr, client.Options{Options: outbound.Options{Proxy: func() (*x509grid.Credential, error) { return c, nil }, GridRoots: other.roots}})
	defer fs.Close()
	_, err = fs.Stat(context.Background(), "/vo/f")
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") || !strings.Contains(err.Error(), "read anonymously") {
		t.Errorf("a server of an unknown CA: %v", err)
	}
}
