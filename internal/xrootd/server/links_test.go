package server

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// The namespace changes of root:// act on the entry a path names: a link
// the site placed in a pool is removed itself, and no change goes
// through it to what it leads to.
func TestFsOpsThroughLinks(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	writeTestFile(t, filepath.Join(dir, "group/data/f1"), []byte("group file"))
	writeTestFile(t, filepath.Join(dir, "user/frank/own"), []byte("frank's"))
	if err := os.Symlink("../../group/data", filepath.Join(dir, "user/frank/glink")); err != nil {
		t.Fatal(err)
	}
	r := login(t, addr)
	for _, c := range []struct {
		what string
		id   uint16
		args string
	}{
		{"rm through a link", proto.ReqRm, "/user/frank/glink/f1"},
		{"mkdir through a link", proto.ReqMkdir, "/user/frank/glink/d"},
		{"mv through a link", proto.ReqMv, "/user/frank/glink/f1 /user/frank/stolen"},
		{"mv into a link", proto.ReqMv, "/user/frank/own /user/frank/glink/f1"},
		{"mv of a link", proto.ReqMv, "/user/frank/glink /user/frank/moved"},
		{"chmod through a link", proto.ReqChmod, "/user/frank/glink/f1"},
	} {
		st, body := r.call(c.id, [16]byte{}, []byte(c.args))
		r.wantErr(c.what, st, body, proto.ErrNotAuthorized)
		if _, msg := errOf(body); !strings.Contains(msg, "/user/frank/glink is a symbolic link") {
			t.Errorf("%s: %q does not name the link", c.what, msg)
		}
	}
	if st, body := r.call(proto.ReqRm, [16]byte{}, []byte("/user/frank/glink")); st != proto.StatusOK {
		t.Fatalf("rm of the link itself: %d %q", st, body)
	}
	if _, err := os.Lstat(filepath.Join(dir, "user/frank/glink")); !os.IsNotExist(err) {
		t.Errorf("the link is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "group/data/f1")); err != nil || string(b) != "group file" {
		t.Errorf("group/data/f1: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user/frank/own")); string(b) != "frank's" {
		t.Errorf("own holds %q", b)
	}
}

// tokenMap verifies "tok-<name>" tokens with fixed scopes.
type tokenMap map[string][]store.Scope

func (m tokenMap) Verify(_ context.Context, raw string) (*store.Identity, error) {
	raw = strings.TrimPrefix(raw, "Bearer ")
	if s, ok := m[raw]; ok {
		return &store.Identity{Subject: raw, Issuer: "https://issuer.test", Scopes: s}, nil
	}
	return nil, &auth.Denied{Reason: "token signature invalid"}
}

// storage.create alone cannot move someone's file away; a
// persist-on-close upload still lands with it, and a refused one names
// the path asked for, never its temporary.
func TestCreateScopeOverRoot(t *testing.T) {
	st, dir := newOriginStore(t, false)
	p, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/", Read: auth.ReadPublic, Write: auth.WriteToken}})
	if err != nil {
		t.Fatal(err)
	}
	tokens := tokenMap{
		"tok-frank": {{Op: store.ScopeCreate, Path: "/user"}},
		"tok-read":  {{Op: store.ScopeRead, Path: "/"}},
	}
	addr := startServer(t, Config{Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: tokens}, nil)}, auth.NewGuard(st, p, nil))
	writeTestFile(t, filepath.Join(dir, "user/alice/f"), []byte("alice's"))
	writeTestFile(t, filepath.Join(dir, "user/frank/keep"), []byte("frank's"))
	r := login(t, addr)
	code, body := r.call(proto.ReqMv, [16]byte{}, []byte("/user/alice/f?authz=tok-frank /user/frank/f"))
	r.wantErr("mv of alice's file with create only", code, body, proto.ErrNotAuthorized)
	if _, msg := errOf(body); !strings.Contains(msg, "storage.modify scope for /user/alice/f") {
		t.Errorf("refusal %q does not name the missing modify scope", msg)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user/alice/f")); string(b) != "alice's" {
		t.Errorf("alice's file holds %q", b)
	}

	h := r.open("/user/frank/new?authz=tok-frank", proto.OpenNew|proto.OpenPosc)
	if code, _ := r.call(proto.ReqWrite, writeReq(h, 0), []byte("new")); code != proto.StatusOK {
		t.Fatal("write failed")
	}
	if code, body := r.call(proto.ReqClose, handleBody(h), nil); code != proto.StatusOK {
		t.Fatalf("close of a create-only upload: %d %q", code, body)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user/frank/new")); string(b) != "new" {
		t.Errorf("upload holds %q", b)
	}

	var ob [16]byte
	binary.BigEndian.PutUint16(ob[2:], proto.OpenNew|proto.OpenPosc)
	code, body = r.call(proto.ReqOpen, ob, []byte("/user/frank/refused?authz=tok-read"))
	r.wantErr("posc upload with a read token", code, body, proto.ErrNotAuthorized)
	if _, msg := errOf(body); strings.Contains(msg, uploadPrefix) || !strings.Contains(msg, "/user/frank/refused") {
		t.Errorf("refusal %q names the temporary, or not the file", msg)
	}
}
