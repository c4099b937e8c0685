// Package krb5auth authenticates campus users by Kerberos: it verifies
// the AP-REQ a client presents (XRootD's krb5 security protocol, or
// SPNEGO over HTTP) with the box's keytab, maps the client principal to
// a local user, and gives that user the groups and scopes its realm is
// configured with, as a store.Identity the namespace policy, the jobs
// API and the logs treat like a token identity.
package krb5auth

import (
	"fmt"
	"path"
	"strings"
	"time"

	"sitebox/internal/store"
)

// IssuerPrefix begins the Issuer of every Kerberos identity: the realm
// follows ("krb5:EXAMPLE.ORG"), so a Kerberos user never collides with a
// token subject of the same name.
const IssuerPrefix = "krb5:"

// UserPlaceholder in a realm's scope paths stands for the mapped local
// user ("storage.create:/home/{user}").
const UserPlaceholder = "{user}"

// Config is what Kerberos authentication needs. Its zero value has no
// keytab and fails New.
type Config struct {
	// Keytab is the file with the service principals' keys.
	Keytab string
	// Principals are the service principals clients may address,
	// "xrootd/host@REALM" for root:// and "HTTP/host@REALM" for https://.
	Principals []string
	// Realms are the client realms accepted; a principal of any other
	// realm is refused.
	Realms []Realm
	// ClockSkew is the largest clock difference accepted with a client
	// (default 5 minutes, Kerberos' usual).
	ClockSkew time.Duration
	// ReplayCache is the file the authenticators accepted within the
	// clock skew are kept in (ReplayCacheFile in a box's state dir), so
	// a restart cannot be used to replay one; "" keeps them in memory
	// only, for tools that never serve.
	ReplayCache string
}

// Realm says how a realm's principals become local users and what they
// may do. Nothing is inferred: a realm's users have exactly the groups
// and scopes listed here.
type Realm struct {
	// Name is the realm ("EXAMPLE.ORG").
	Name string
	// MapFile, if set, lists "principal localuser" per line; principals
	// not listed are refused. Empty: the realm is stripped
	// (alice@EXAMPLE.ORG is alice), and principals with an instance
	// (alice/admin) are refused.
	MapFile string
	// Groups are the groups ("/cms") the realm's users are members of;
	// their VOs count for read = "vo" namespaces.
	Groups []string
	// Scopes are WLCG scopes granted to each user ("storage.read:/store",
	// "storage.create:/store/user/{user}", "compute.create").
	Scopes []string
}

// ParsePrincipal splits "svc/host@REALM" (or "user@REALM") into its name
// components and realm.
func ParsePrincipal(p string) (components []string, realm string, err error) {
	name, realm, ok := strings.Cut(p, "@")
	if !ok || name == "" || realm == "" || strings.Contains(realm, "@") {
		return nil, "", fmt.Errorf("principal %q: want name@REALM, e.g. xrootd/host.example.org@EXAMPLE.ORG", p)
	}
	components = strings.Split(name, "/")
	for _, c := range components {
		if c == "" || strings.ContainsAny(c, " \t\n\x00") {
			return nil, "", fmt.Errorf("principal %q: empty or blank name component", p)
		}
	}
	return components, realm, nil
}

// ParseScope reads one WLCG scope: a storage scope with a path
// ("storage.read:/store", where {user} may appear), or a compute scope.
func ParseScope(s string) (op, p string, err error) {
	switch s {
	case "compute.create":
		return store.ScopeComputeCreate, "", nil
	case "compute.read":
		return store.ScopeComputeRead, "", nil
	case "compute.modify":
		return store.ScopeComputeModify, "", nil
	case "compute.cancel":
		return store.ScopeComputeCancel, "", nil
	}
	name, p, ok := strings.Cut(s, ":")
	switch name {
	case "storage.read", "storage.create", "storage.modify", "storage.stage":
		op = strings.TrimPrefix(name, "storage.")
	default:
		return "", "", fmt.Errorf("scope %q: want storage.{read,create,modify,stage}:/path or compute.{create,read,modify,cancel}", s)
	}
	if !ok || !strings.HasPrefix(p, "/") {
		return "", "", fmt.Errorf("scope %q: a storage scope needs an absolute path (storage.read:/store)", s)
	}
	probe := strings.ReplaceAll(p, UserPlaceholder, "u")
	if c, err := store.CleanPath(probe); err != nil || c != probe {
		return "", "", fmt.Errorf("scope %q: %q is not a clean absolute path", s, p)
	}
	return op, p, nil
}

// scopesFor expands the realm's scopes for one local user.
func scopesFor(scopes []string, user string) []store.Scope {
	var out []store.Scope
	for _, s := range scopes {
		op, p, err := ParseScope(s)
		if err != nil {
			continue // New refused these already
		}
		if p != "" {
			p = path.Clean(strings.ReplaceAll(p, UserPlaceholder, user))
		}
		out = append(out, store.Scope{Op: op, Path: p})
	}
	return out
}

// Validate reports the first problem of c, naming the setting.
func (c *Config) Validate() error {
	if c.Keytab == "" {
		return fmt.Errorf("keytab: missing: the file with the service principals' keys")
	}
	if len(c.Principals) == 0 {
		return fmt.Errorf("principals: missing: e.g. [\"xrootd/host.example.org@EXAMPLE.ORG\", \"HTTP/host.example.org@EXAMPLE.ORG\"]")
	}
	for _, p := range c.Principals {
		if _, _, err := ParsePrincipal(p); err != nil {
			return fmt.Errorf("principals: %w", err)
		}
	}
	if len(c.Realms) == 0 {
		return fmt.Errorf("realm: none configured: no Kerberos user could be mapped")
	}
	seen := map[string]bool{}
	for _, r := range c.Realms {
		if r.Name == "" || strings.ContainsAny(r.Name, "@/ \t") {
			return fmt.Errorf("realm: %q is not a realm name (e.g. EXAMPLE.ORG)", r.Name)
		}
		if seen[r.Name] {
			return fmt.Errorf("realm %s: configured twice", r.Name)
		}
		seen[r.Name] = true
		for _, g := range r.Groups {
			if !strings.HasPrefix(g, "/") || len(g) < 2 || strings.ContainsAny(g, " \t") {
				return fmt.Errorf("realm %s: group %q: want a group path such as \"/cms\"", r.Name, g)
			}
		}
		for _, s := range r.Scopes {
			if _, _, err := ParseScope(s); err != nil {
				return fmt.Errorf("realm %s: %w", r.Name, err)
			}
		}
	}
	return nil
}
