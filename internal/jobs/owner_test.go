package jobs

import (
	"testing"

	"sitebox/internal/store"
)

// A job's staging acts with the method its owner proved themselves by,
// which the policy's grants for site-mapped users depend on; records
// from before jobs kept it are read by their issuer's form.
func TestStageOwnerMethod(t *testing.T) {
	for _, c := range []struct {
		name string
		job  Job
		want string
	}{
		{"kept", Job{Owner: "alice", Issuer: "krb5:EXAMPLE.ORG", Auth: store.MethodKrb5}, store.MethodKrb5},
		{"kept over the issuer's form", Job{Owner: "alice", Issuer: "x509:/CN=CA", Auth: store.MethodToken}, store.MethodToken},
		{"legacy Kerberos", Job{Owner: "alice", Issuer: "krb5:EXAMPLE.ORG"}, store.MethodKrb5},
		{"legacy X.509", Job{Owner: "/CN=Alice", Issuer: "x509:/CN=CA"}, store.MethodX509},
		{"legacy token", Job{Owner: "alice", Issuer: "https://issuer"}, store.MethodToken},
		{"no issuer", Job{Owner: "alice"}, ""},
	} {
		if got := c.job.StageOwner().Identity.Method; got != c.want {
			t.Errorf("%s: method %q, want %q", c.name, got, c.want)
		}
	}
}
