package interop

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"sitebox/test/peers"
)

// testKDC is a real MIT KDC on loopback with a throwaway realm, stopped
// at the end of the test.
type testKDC struct{ *peers.KDC }

// startKDC creates realm's database and starts krb5kdc.
func startKDC(t *testing.T, realm string) *testKDC {
	t.Helper()
	for _, tool := range append(peers.KDCTools, "kdestroy") {
		peers.Require(t, tool) // scripts/setup.sh installs krb5-kdc, krb5-admin-server, krb5-user
	}
	k, err := peers.StartKDC(context.Background(), filepath.Join(t.TempDir(), "kdc"), realm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.Stop()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(k.Dir, "kdc.log"))
			t.Logf("KDC log:\n%s", b)
		}
	})
	return &testKDC{k}
}

// kadmin runs one kadmin.local query.
func (k *testKDC) kadmin(t *testing.T, query string) {
	t.Helper()
	if err := k.Admin(context.Background(), query); err != nil {
		t.Fatal(err)
	}
}

// servicePrincipals adds the box's principals with random keys and
// exports them to a keytab, returning its path.
func (k *testKDC) servicePrincipals(t *testing.T, principals ...string) string {
	t.Helper()
	kt, err := k.Keytab(context.Background(), "box.keytab", principals...)
	if err != nil {
		t.Fatal(err)
	}
	return kt
}

// user adds a user principal with a password.
func (k *testKDC) user(t *testing.T, name, password string) {
	t.Helper()
	k.kadmin(t, "addprinc -pw "+password+" "+name)
}

// kinit gets a TGT for principal into a fresh credential cache and
// returns the client environment using it (extra kinit flags: -l 5s).
func (k *testKDC) kinit(t *testing.T, principal, password string, flags ...string) []string {
	t.Helper()
	env, err := k.Kinit(context.Background(), principal, password, filepath.Join(t.TempDir(), "cc"), flags...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}
