package auth

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"sitebox/internal/x509grid"
)

// X509Finding is something about the X.509 trust stores an operator
// should fix, for config check (a warning) and the doctor.
type X509Finding struct {
	Key string // the setting at fault: "auth.x509.cert_dir"
	// Severe: credentials that should be accepted are all refused (every
	// user of a CA, or of every CA).
	Severe bool
	Msg    string
	Fix    string
}

// maxListed bounds the names a finding lists.
const maxListed = 5

// X509Findings reads the CA directory and vomsdir [auth.x509] names and
// says what makes them refuse credentials at now (see findings). Nil
// without [auth.x509] or when the directories cannot be read (Validate
// reports that).
func (a *Settings) X509Findings(now time.Time) []X509Finding {
	if a.X509 == nil {
		return nil
	}
	x := *a.X509
	x.defaults(os.Getenv)
	v, err := x.Verifier()
	if err != nil {
		return nil
	}
	return findings(&x, v, a.Namespaces, now)
}

// Findings is X509Findings for the trust stores as last read, for the
// namespaces given.
func (a *X509) Findings(namespaces []NamespaceEntry, now time.Time) []X509Finding {
	return findings(&a.settings, a.state.Load().v, namespaces, now)
}

// findings says what makes the trust stores v read refuse credentials at
// now: no CA at all, CRLs that refuse every user of their CA under the
// CRL mode, stale CRLs, expired CAs, files skipped, and VOs a read = "vo"
// namespace needs that the vomsdir has no VOMS server for.
func findings(x *X509Settings, v *x509grid.Verifier, namespaces []NamespaceEntry, now time.Time) []X509Finding {
	var out []X509Finding
	add := func(key string, severe bool, fix, format string, args ...any) {
		out = append(out, X509Finding{Key: "auth.x509." + key, Severe: severe, Msg: fmt.Sprintf(format, args...), Fix: fix})
	}
	fetch := "Run fetch-crl (Debian: apt-get install fetch-crl; its timer keeps the CRLs current)"
	st := v.Status(now)
	if st.CAs == 0 {
		add("cert_dir", true, "Install the IGTF CA distribution (the EGI trust anchors, e.g. ca-policy-egi-core, or the IGTF tarball as <hash>.0 files) and fetch-crl",
			"%s holds no CA certificate (<hash>.0 files): every X.509 credential is refused", x.CertDir)
	}
	if len(st.RefusingCRLs) > 0 {
		add("crl", true, fetch+", or set crl = \"try\" to accept CAs without a current CRL",
			"under crl = %q every user of %d CA(s) is refused: %s", x.CRL, len(st.RefusingCRLs), listSome(st.RefusingCRLs))
	}
	if len(st.StaleCRLs) > 0 {
		add("crl", false, fetch, "%d CRL(s) out of date, used still but blind to later revocations: %s", len(st.StaleCRLs), listSome(st.StaleCRLs))
	}
	if len(st.Expired) > 0 {
		add("cert_dir", false, "Update the CA distribution", "%d CA certificate(s) out of date, whose users are refused: %s", len(st.Expired), listSome(st.Expired))
	}
	if w := v.Warnings(); len(w) > 0 {
		add("cert_dir", false, "Remove or replace the files named", "%d file(s) of the trust stores skipped: %s", len(w), listSome(w))
	}
	return append(out, missingVOMSVOs(x, v.VOs(), namespaces)...)
}

// missingVOMSVOs names each VO a read = "vo" namespace needs that the
// vomsdir lists no VOMS server for and no mapping rule grants: its
// members' proxies are refused there.
func missingVOMSVOs(x *X509Settings, vomsVOs []string, namespaces []NamespaceEntry) []X509Finding {
	var out []X509Finding
	have := append(slices.Clone(vomsVOs), x.ruleVOs()...)
	seen := map[string]bool{}
	for _, n := range namespaces {
		if n.Read != ReadVO {
			continue
		}
		for _, vo := range n.VOs {
			if slices.Contains(have, vo) || seen[vo] {
				continue
			}
			seen[vo] = true
			out = append(out, X509Finding{Key: "auth.x509.voms_dir",
				Msg: fmt.Sprintf("VOMS proxies of %s are refused on %s: %s lists no VOMS server for %s", vo, n.Prefix, x.VOMSDir, vo),
				Fix: fmt.Sprintf("Install %s/%s/<voms host>.lsc for each VOMS server of the VO (its subject DN, then its CA's; the VO's vo-client or wlcg-voms package has them)", x.VOMSDir, vo)})
		}
	}
	return out
}

// ruleVOs are the VOs the rules' groups name.
func (x *X509Settings) ruleVOs() []string {
	var out []string
	for _, e := range x.Maps {
		for _, g := range e.Groups {
			out = append(out, groupVO(g))
		}
	}
	return out
}

// listSome joins the first few of items, saying how many more there are.
func listSome(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:maxListed], "; "), len(items)-maxListed)
}
