package auth

import (
	"fmt"
	"os"
	"time"

	"sitebox/internal/krb5auth"
	"sitebox/internal/problem"
)

// KerberosSettings lets campus users in with their Kerberos tickets: the krb5
// security protocol on root:// and roots://, SPNEGO (Negotiate) on
// https://. A box without keytab takes no Kerberos credentials.
type KerberosSettings struct {
	// Keytab holds the keys of Principals.
	Keytab string `toml:"keytab"`
	// Principals are the box's service principals: "xrootd/<host>@REALM"
	// (root://, announced to clients at login) and "HTTP/<host>@REALM"
	// (https://, the name browsers and curl ask their KDC for).
	Principals []string `toml:"principals"`
	// Realms are the client realms accepted, each with its user mapping,
	// groups and scopes; principals of other realms are refused.
	Realms []KerberosRealmEntry `toml:"realm"`
}

// KerberosRealmEntry is one accepted client realm.
type KerberosRealmEntry struct {
	Name string `toml:"name"`
	// MapFile lists "principal localuser" per line; empty strips the
	// realm (alice@EXAMPLE.ORG → alice).
	MapFile string `toml:"map_file"`
	// Groups the realm's users are members of ("/cms"): never inferred.
	Groups []string `toml:"groups"`
	// Scopes granted to the realm's users, as WLCG scopes;
	// "{user}" in a path is the mapped local user.
	Scopes []string `toml:"scopes"`
}

// Enabled reports whether Kerberos credentials are taken at all.
func (k *KerberosSettings) Enabled() bool {
	return k.Keytab != "" || len(k.Principals) > 0 || len(k.Realms) > 0
}

// Krb5 is the krb5auth configuration k describes, with [auth] clock_skew
// (Settings.Skew; 0 for Kerberos' usual).
func (k *KerberosSettings) Krb5(clockSkew time.Duration) krb5auth.Config {
	c := krb5auth.Config{Keytab: k.Keytab, Principals: k.Principals, ClockSkew: clockSkew}
	for _, r := range k.Realms {
		c.Realms = append(c.Realms, krb5auth.Realm{Name: r.Name, MapFile: r.MapFile, Groups: r.Groups, Scopes: r.Scopes})
	}
	return c
}

func (k *KerberosSettings) validate() []problem.Problem {
	if !k.Enabled() {
		return nil
	}
	var ps []problem.Problem
	c := k.Krb5(0)
	if err := c.Validate(); err != nil {
		ps = append(ps, problem.Problem{Key: "auth.kerberos", Msg: err.Error()})
	}
	if k.Keytab != "" {
		if _, err := os.Stat(k.Keytab); err != nil {
			ps = append(ps, problem.Problem{Key: "auth.kerberos.keytab", Msg: fmt.Sprintf("cannot read %s: %v", k.Keytab, problem.PathCause(err))})
		}
	}
	for i, r := range k.Realms {
		if r.MapFile == "" {
			continue
		}
		if _, err := os.Stat(r.MapFile); err != nil {
			ps = append(ps, problem.Problem{Key: fmt.Sprintf("auth.kerberos.realm[%d].map_file", i+1), Msg: fmt.Sprintf("cannot read %s: %v", r.MapFile, problem.PathCause(err))})
		}
	}
	return ps
}

// kerberosVOs are the VOs the Kerberos realms' groups assert.
func (k *KerberosSettings) kerberosVOs() []string {
	var out []string
	for _, r := range k.Realms {
		for _, g := range r.Groups {
			out = append(out, groupVO(g))
		}
	}
	return out
}
