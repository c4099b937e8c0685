package jobs

import (
	"testing"

	"sitebox/internal/auth"
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
		{"kept", Job{Owner: "alice", Issuer: "krb5:EXAMPLE.ORG", Auth: auth.MethodKrb5}, auth.MethodKrb5},
		{"kept over the issuer's form", Job{Owner: "alice", Issuer: "x509:/CN=CA", Auth: auth.MethodToken}, auth.MethodToken},
		{"legacy Kerberos", Job{Owner: "alice", Issuer: "krb5:EXAMPLE.ORG"}, auth.MethodKrb5},
		{"legacy X.509", Job{Owner: "/CN=Alice", Issuer: "x509:/CN=CA"}, auth.MethodX509},
		{"legacy token", Job{Owner: "alice", Issuer: "https://issuer"}, auth.MethodToken},
		{"no issuer", Job{Owner: "alice"}, ""},
	} {
		if got := c.job.StageOwner().Identity.Method; got != c.want {
			t.Errorf("%s: method %q, want %q", c.name, got, c.want)
		}
	}
}
