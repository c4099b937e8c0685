package krb5auth

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
)

const (
	xrdPrinc  = "xrootd/box.example.org@EXAMPLE.ORG"
	httpPrinc = "HTTP/box.example.org@EXAMPLE.ORG"
)

func newTestAuth(t *testing.T, realm *fakeRealm, realms ...Realm) *Authenticator {
	t.Helper()
	if len(realms) == 0 {
		realms = []Realm{{Name: "EXAMPLE.ORG", Groups: []string{"/cms"},
			Scopes: []string{"storage.read:/store", "storage.create:/store/user/{user}", "compute.create"}}}
	}
	a, err := New(Config{Keytab: realm.ktFile, Principals: []string{xrdPrinc, httpPrinc}, Realms: realms}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func aliceTicket() ticket {
	return ticket{client: "alice", crealm: "EXAMPLE.ORG", service: "xrootd/box.example.org", srealm: "EXAMPLE.ORG"}
}

func TestVerifyAPReqMapsTheUser(t *testing.T) {
	realm := newFakeRealm(t, xrdPrinc, httpPrinc)
	a := newTestAuth(t, realm)
	id, err := a.VerifyAPReq(realm.apReq(t, aliceTicket()), "xrootd")
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "alice" || id.Issuer != "krb5:EXAMPLE.ORG" || !slices.Equal(id.Groups, []string{"/cms"}) {
		t.Errorf("identity %+v", id)
	}
	want := []store.Scope{{Op: "read", Path: "/store"}, {Op: "create", Path: "/store/user/alice"}, {Op: store.ScopeComputeCreate}}
	if !slices.Equal(id.Scopes, want) {
		t.Errorf("scopes %v, want %v", id.Scopes, want)
	}
	if time.Until(id.Expires) < 50*time.Minute {
		t.Errorf("expires %v: want the ticket's end", id.Expires)
	}
	if p := a.Principal("xrootd"); p != xrdPrinc {
		t.Errorf("Principal(xrootd) = %q", p)
	}
}

func TestVerifyAPReqRefusals(t *testing.T) {
	realm := newFakeRealm(t, xrdPrinc, httpPrinc)
	stale := newFakeRealmSecret(t, "old-secret", xrdPrinc) // the same principal, another key
	mapFile := filepath.Join(t.TempDir(), "users")
	os.WriteFile(mapFile, []byte("# campus\ncarol@CAMPUS.EDU cms001\n"), 0o644)
	a := newTestAuth(t, realm, Realm{Name: "EXAMPLE.ORG"}, Realm{Name: "CAMPUS.EDU", MapFile: mapFile})
	expired := aliceTicket()
	expired.start, expired.end = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	future := aliceTicket()
	future.start = time.Now().Add(time.Hour)
	other := aliceTicket()
	other.crealm = "ELSEWHERE.NET"
	inst := aliceTicket()
	inst.client = "alice/admin"
	dave := aliceTicket()
	dave.client, dave.crealm = "dave", "CAMPUS.EDU"
	httpTk := aliceTicket()
	httpTk.service = "HTTP/box.example.org"
	kvno := aliceTicket()
	kvno.kvno = 3
	realm.rotate(t, "xrootd/box.example.org", "EXAMPLE.ORG") // after New read the keytab file
	for _, c := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"expired", realm.apReq(t, expired), "KRB_AP_ERR_TKT_EXPIRED"},
		{"not yet valid", realm.apReq(t, future), "KRB_AP_ERR_TKT_NYV"},
		{"another key", stale.apReq(t, aliceTicket()), "error decrypting encpart"},
		{"another kvno", realm.apReq(t, kvno), "KRB_AP_ERR_NOKEY"},
		{"unmapped realm", realm.apReq(t, other), "realm ELSEWHERE.NET is not mapped on this box"},
		{"instance", realm.apReq(t, inst), "has an instance"},
		{"not in the map file", realm.apReq(t, dave), "is not in realm CAMPUS.EDU's map file"},
		{"another service", realm.apReq(t, httpTk), "not a xrootd principal of this box"},
		{"garbage", []byte("not an AP-REQ"), "malformed AP-REQ"},
		{"oversized", make([]byte, MaxAPReq+1), "over the"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := a.VerifyAPReq(c.raw, "xrootd")
			if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, %v; want a refusal naming %q", id, err, c.want)
			}
		})
	}
	carol := aliceTicket()
	carol.client, carol.crealm = "carol", "CAMPUS.EDU"
	if id, err := a.VerifyAPReq(realm.apReq(t, carol), "xrootd"); err != nil || id.Subject != "cms001" || id.Issuer != "krb5:CAMPUS.EDU" || len(id.Scopes) != 0 {
		t.Errorf("carol through the map file: %+v, %v", id, err)
	}
}

func TestVerifyNegotiate(t *testing.T) {
	realm := newFakeRealm(t, xrdPrinc, httpPrinc)
	a := newTestAuth(t, realm)
	tk := aliceTicket()
	tk.service = "HTTP/box.example.org"
	id, err := a.VerifyNegotiate(realm.negotiate(t, tk))
	if err != nil || id.Subject != "alice" {
		t.Fatalf("Negotiate: %+v, %v", id, err)
	}
	for _, c := range []struct{ name, tok, want string }{
		{"not base64", "!!!", "not base64"},
		{"not a token", "aGVsbG8=", "not a Kerberos GSS token"},
		{"xrootd ticket", realm.negotiate(t, aliceTicket()), "not a HTTP principal"},
	} {
		if _, err := a.VerifyNegotiate(c.tok); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	realm := newFakeRealm(t, xrdPrinc)
	ok := Realm{Name: "EXAMPLE.ORG"}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no keytab", Config{Principals: []string{xrdPrinc}, Realms: []Realm{ok}}, "keytab: missing"},
		{"missing keytab", Config{Keytab: "/nonexistent", Principals: []string{xrdPrinc}, Realms: []Realm{ok}}, "keytab /nonexistent"},
		{"principal not in keytab", Config{Keytab: realm.ktFile, Principals: []string{httpPrinc}, Realms: []Realm{ok}}, "has no key for HTTP/box.example.org@EXAMPLE.ORG"},
		{"bad principal", Config{Keytab: realm.ktFile, Principals: []string{"xrootd/box"}, Realms: []Realm{ok}}, "want name@REALM"},
		{"no realm", Config{Keytab: realm.ktFile, Principals: []string{xrdPrinc}}, "none configured"},
		{"bad scope", Config{Keytab: realm.ktFile, Principals: []string{xrdPrinc}, Realms: []Realm{{Name: "EXAMPLE.ORG", Scopes: []string{"storage.read:store"}}}}, "absolute path"},
		{"bad group", Config{Keytab: realm.ktFile, Principals: []string{xrdPrinc}, Realms: []Realm{{Name: "EXAMPLE.ORG", Groups: []string{"cms"}}}}, "group path"},
		{"twice", Config{Keytab: realm.ktFile, Principals: []string{xrdPrinc}, Realms: []Realm{ok, ok}}, "configured twice"},
		{"missing map file", Config{Keytab: realm.ktFile, Principals: []string{xrdPrinc}, Realms: []Realm{{Name: "EXAMPLE.ORG", MapFile: "/nonexistent"}}}, "map file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %v, want %q", err, c.want)
			}
		})
	}
}

func TestMapFileRefusesBadLines(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"one field", "alice@EXAMPLE.ORG\n", "want \"principal localuser\""},
		{"other realm", "alice@OTHER.ORG alice\n", "not a principal of realm EXAMPLE.ORG"},
		{"bad user", "alice@EXAMPLE.ORG ../root\n", "not a valid user name"},
	} {
		f := filepath.Join(t.TempDir(), "map")
		os.WriteFile(f, []byte(c.text), 0o644)
		if _, err := newMapper(Realm{Name: "EXAMPLE.ORG", MapFile: f}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// An AP-REQ seen once is refused the second time: one captured on plain
// root:// cannot be replayed within the clock skew, by SPNEGO on https://
// either, nor once the authenticator is made again (a restart).
func TestVerifyAPReqRefusesReplay(t *testing.T) {
	realm := newFakeRealm(t, xrdPrinc, httpPrinc)
	cfg := Config{Keytab: realm.ktFile, Principals: []string{xrdPrinc, httpPrinc}, Realms: []Realm{{Name: "EXAMPLE.ORG"}},
		ReplayCache: ReplayCacheFile(t.TempDir())}
	a, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := realm.apReq(t, aliceTicket())
	if _, err := a.VerifyAPReq(raw, "xrootd"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.VerifyAPReq(raw, "xrootd"); err == nil || !strings.Contains(err.Error(), "replay") {
		t.Errorf("replayed AP-REQ: %v, want a replay refusal", err)
	}
	tk := aliceTicket()
	tk.service = "HTTP/box.example.org"
	neg := realm.negotiate(t, tk)
	if _, err := a.VerifyNegotiate(neg); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.VerifyAPReq(realm.apReq(t, aliceTicket()), "xrootd"); err == nil {
		t.Error("a closed authenticator accepted a credential")
	}
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.VerifyAPReq(raw, "xrootd"); err == nil || !strings.Contains(err.Error(), "replay") {
		t.Errorf("AP-REQ replayed after a restart: %v, want a replay refusal", err)
	}
	if _, err := b.VerifyNegotiate(neg); err == nil || !strings.Contains(err.Error(), "replay") {
		t.Errorf("Negotiate token replayed after a restart: %v, want a replay refusal", err)
	}
}
