package krb5auth

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// fakeRealm plays the KDC: it holds the service keys (as a keytab) and
// issues tickets for any client with any times, so the tests can make
// the tickets a real KDC would not: expired, for another key, from
// another realm.
type fakeRealm struct {
	kt     *keytab.Keytab
	ktFile string
}

func newFakeRealm(t *testing.T, principals ...string) *fakeRealm {
	t.Helper()
	return newFakeRealmSecret(t, "service-secret", principals...)
}

// newFakeRealmSecret is newFakeRealm with the services' keys made from
// secret: another secret, other keys.
func newFakeRealmSecret(t *testing.T, secret string, principals ...string) *fakeRealm {
	t.Helper()
	kt := keytab.New()
	for _, p := range principals {
		comps, realm, err := ParsePrincipal(p)
		if err != nil {
			t.Fatal(err)
		}
		name := comps[0]
		for _, c := range comps[1:] {
			name += "/" + c
		}
		if err := kt.AddEntry(name, realm, secret+p, time.Now(), 2, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
			t.Fatal(err)
		}
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "box.keytab")
	os.WriteFile(f, b, 0o600)
	return &fakeRealm{kt: kt, ktFile: f}
}

// ticket is a ticket for client@crealm to service@srealm valid in [start, end).
type ticket struct {
	client, crealm, service, srealm string
	start, end                      time.Time
	kvno                            int
}

func (r *fakeRealm) issue(t *testing.T, tk ticket) (messages.Ticket, types.EncryptionKey) {
	t.Helper()
	if tk.kvno == 0 {
		tk.kvno = 2
	}
	if tk.start.IsZero() {
		tk.start = time.Now().Add(-time.Minute)
	}
	if tk.end.IsZero() {
		tk.end = time.Now().Add(time.Hour)
	}
	sname := types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, tk.service)
	tkt, key, err := messages.NewTicket(types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, tk.client), tk.crealm,
		sname, tk.srealm, asn1.BitString{Bytes: make([]byte, 4), BitLength: 32}, r.kt, etypeID.AES256_CTS_HMAC_SHA1_96, tk.kvno, tk.start, tk.start, tk.end, tk.end)
	if err != nil {
		t.Fatal(err)
	}
	return tkt, key
}

// apReq is the AP-REQ a client presents with tk.
func (r *fakeRealm) apReq(t *testing.T, tk ticket) []byte {
	t.Helper()
	tkt, key := r.issue(t, tk)
	auth, err := types.NewAuthenticator(tk.crealm, types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, tk.client))
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		t.Fatal(err)
	}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// negotiate is the base64 SPNEGO token of an "Authorization: Negotiate"
// header for tk.
func (r *fakeRealm) negotiate(t *testing.T, tk ticket) string {
	t.Helper()
	tkt, key := r.issue(t, tk)
	cl := client.NewWithPassword(tk.client, tk.crealm, "unused", config.New())
	init, err := spnego.NewNegTokenInitKRB5(cl, tkt, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := (&spnego.SPNEGOToken{Init: true, NegTokenInit: init}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// rotate gives the service a new key (kvno 3) the box's keytab file does
// not have, as kadmin's cpw -randkey does.
func (r *fakeRealm) rotate(t *testing.T, name, realm string) {
	t.Helper()
	if err := r.kt.AddEntry(name, realm, "rotated-secret", time.Now(), 3, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
}
