package webdav

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/origin"
	"sitebox/internal/store"
)

// A COPY or MOVE that must be refused is refused before it changes
// anything, Overwrite: T or not.
func TestTreeRefusalsComeFirst(t *testing.T) {
	for _, c := range []struct {
		name, method, from, to string
		want                   int
	}{
		{"copy a file onto its own directory", "COPY", "/store/user/alice/own.txt", "/store/user/alice", 403},
		{"copy a collection onto its parent", "COPY", "/store/user/alice/sub", "/store/user/alice", 403},
		{"copy a collection into its own subtree", "COPY", "/store/user/alice", "/store/user/alice/sub", 403},
		{"copy onto itself", "COPY", "/store/user/alice", "/store/user/alice", 403},
		{"move a collection into its own subtree", "MOVE", "/store/user/alice", "/store/user/alice/sub", 403},
		{"move a file onto its own directory", "MOVE", "/store/user/alice/own.txt", "/store/user/alice", 403},
		{"move a collection onto its parent", "MOVE", "/store/user/alice/sub", "/store/user/alice", 403},
		{"move onto itself", "MOVE", "/store/user/alice/sub", "/store/user/alice/sub", 403},
		{"move to another export", "MOVE", "/store/user/alice/own.txt", "/other/dst", 501},
		{"move a file to another export", "MOVE", "/store/user/alice/own.txt", "/other/file", 501},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, other := t.TempDir(), t.TempDir()
			writeFile(t, dir, "user/alice/own.txt", []byte("alice's"))
			writeFile(t, dir, "user/alice/sub/keep", []byte("kept"))
			writeFile(t, other, "dst/keep", []byte("other kept"))
			writeFile(t, other, "file", []byte("other file"))
			o, err := origin.New(origin.Config{Exports: []origin.Export{
				{Prefix: "/store", Pools: []string{dir}}, {Prefix: "/other", Pools: []string{other}}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			srv := httptest.NewServer(New(Config{}, o, nil))
			defer srv.Close()
			resp, body := do(t, c.method, srv.URL+c.from, nil, "Destination", c.to, "Overwrite", "T")
			if c.want != 0 && resp.StatusCode != c.want || resp.StatusCode < 400 {
				t.Errorf("%d %q, want %d", resp.StatusCode, body, c.want)
			}
			for f, want := range map[string]string{"user/alice/own.txt": "alice's", "user/alice/sub/keep": "kept"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != want {
					t.Errorf("%s: %q %v after the refusal", f, b, err)
				}
			}
			for f, want := range map[string]string{"dst/keep": "other kept", "file": "other file"} {
				if b, err := os.ReadFile(filepath.Join(other, f)); err != nil || string(b) != want {
					t.Errorf("/other/%s: %q %v after the refusal", f, b, err)
				}
			}
		})
	}
}

// scopedTokens maps "tok-<name>" to an identity with the given scopes.
type scopedTokens map[string][]store.Scope

func (s scopedTokens) Verify(_ context.Context, raw string) (*store.Identity, error) {
	if scopes, ok := s[raw]; ok {
		return &store.Identity{Subject: raw, Issuer: "https://issuer.test", Scopes: scopes}, nil
	}
	return nil, &auth.Denied{Reason: "token signature invalid"}
}

func scopes(list ...string) []store.Scope {
	var out []store.Scope
	for _, s := range list {
		op, p, _ := strings.Cut(s, ":")
		out = append(out, store.Scope{Op: strings.TrimPrefix(op, "storage."), Path: p})
	}
	return out
}

// scopedServer serves /store through the auth guard, writes by token.
func scopedServer(t *testing.T, tokens scopedTokens) (*httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/store", Read: auth.ReadPublic, Write: auth.WriteToken}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: tokens}, nil)}, auth.NewGuard(o, p, nil), nil))
	t.Cleanup(func() { srv.Close(); o.Close() })
	return srv, dir
}

// A MOVE the policy refuses (no modify right on the source) leaves the
// destination it would have replaced alone.
func TestMoveRefusedByPolicyReplacesNothing(t *testing.T) {
	srv, dir := scopedServer(t, scopedTokens{"tok-bob": scopes("storage.modify:/store/user/bob", "storage.create:/store/user/alice")})
	writeFile(t, dir, "user/alice/data/f", []byte("alice's"))
	writeFile(t, dir, "user/bob/dst/keep", []byte("bob's"))
	resp, body := do(t, "MOVE", srv.URL+"/store/user/alice/data", nil,
		"Destination", "/store/user/bob/dst", "Overwrite", "T", "Authorization", "Bearer tok-bob")
	if resp.StatusCode != 403 || !strings.Contains(body, "storage.modify") {
		t.Errorf("%d %q, want 403 naming the missing modify scope", resp.StatusCode, body)
	}
	for f, want := range map[string]string{"user/alice/data/f": "alice's", "user/bob/dst/keep": "bob's"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v after the refusal", f, b, err)
		}
	}
}

// storage.create alone writes new files; it cannot move someone else's
// file away (and then write at its name).
func TestCreateScopeMovesNoExistingFile(t *testing.T) {
	srv, dir := scopedServer(t, scopedTokens{
		"tok-frank": scopes("storage.create:/store/user"),
		"tok-exact": scopes("storage.create:/store/user/frank/exact.txt"),
		"tok-read":  scopes("storage.read:/store"),
	})
	writeFile(t, dir, "user/alice/f", []byte("alice's"))
	writeFile(t, dir, "user/frank/keep", []byte("frank's"))
	as := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	resp, body := do(t, "MOVE", srv.URL+"/store/user/alice/f", nil, append(as("tok-frank"), "Destination", "/store/user/frank/f")...)
	if resp.StatusCode != 403 || !strings.Contains(body, "storage.modify scope for /store/user/alice/f") {
		t.Errorf("MOVE of alice's file with create only: %d %q, want 403 naming the missing modify scope", resp.StatusCode, body)
	}
	if resp, body := do(t, "PUT", srv.URL+"/store/user/alice/f", strings.NewReader("frank's"), as("tok-frank")...); resp.StatusCode != 403 {
		t.Errorf("PUT over alice's file with create only: %d %q, want 403", resp.StatusCode, body)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user/alice/f")); string(b) != "alice's" {
		t.Errorf("alice's file holds %q", b)
	}
	// Uploads of new files land with create alone, also with a scope for
	// exactly the file (the temporary next to it is the upload's own).
	for tok, p := range map[string]string{"tok-frank": "/store/user/frank/new.txt", "tok-exact": "/store/user/frank/exact.txt"} {
		if resp, body := do(t, "PUT", srv.URL+p, strings.NewReader("new"), as(tok)...); resp.StatusCode != 201 {
			t.Errorf("PUT %s with %s: %d %q, want 201", p, tok, resp.StatusCode, body)
		}
	}
	// A refused upload names the path asked for, never the temporary.
	resp, body = do(t, "PUT", srv.URL+"/store/user/frank/refused.txt", strings.NewReader("x"), as("tok-read")...)
	if resp.StatusCode != 403 || strings.Contains(body, uploadPrefix) || !strings.Contains(body, "/store/user/frank/refused.txt") {
		t.Errorf("refused PUT: %d %q, want 403 naming /store/user/frank/refused.txt only", resp.StatusCode, body)
	}
	assertNoUploads(t, dir)
}

// A DELETE of a collection the requester may not delete is refused
// before any member goes, even members it may delete.
func TestDeleteRefusedAsAWholeFirst(t *testing.T) {
	srv, dir := scopedServer(t, scopedTokens{"tok-bob": scopes("storage.modify:/store/user/alice/sub")})
	writeFile(t, dir, "user/alice/sub/keep", []byte("kept"))
	resp, body := do(t, "DELETE", srv.URL+"/store/user/alice", nil, "Authorization", "Bearer tok-bob")
	if resp.StatusCode != 403 || !strings.Contains(body, "rm /store/user/alice:") {
		t.Errorf("%d %q, want 403 for /store/user/alice", resp.StatusCode, body)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "user/alice/sub/keep")); err != nil || string(b) != "kept" {
		t.Errorf("user/alice/sub/keep: %q %v after the refusal", b, err)
	}
}
