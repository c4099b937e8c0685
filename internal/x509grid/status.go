package x509grid

import (
	"fmt"
	"sort"
	"time"
)

// VOs are the VOs the vomsdir lists a VOMS server for, sorted.
func (v *Verifier) VOs() []string {
	if v.voms == nil {
		return nil
	}
	var out []string
	for vo, t := range v.voms.vos {
		if len(t.lsc) > 0 || len(t.certs) > 0 {
			out = append(out, vo)
		}
	}
	sort.Strings(out)
	return out
}

// Status is the state of the trust stores at a time, for operators:
// what makes the CA directory refuse credentials it should accept.
type Status struct {
	// CAs is how many CA certificates the CA directory holds.
	CAs int
	// Expired are the CA certificates out of their validity period
	// (their users are refused).
	Expired []string
	// RefusingCRLs are the CAs whose users are all refused under the CRL
	// mode: a CRL file that does not verify, a CA without CRL under
	// "use" or "require", a CRL out of date under "require".
	RefusingCRLs []string
	// StaleCRLs are CRLs out of date under "try" and "use": still used,
	// but revocations since are not known.
	StaleCRLs []string
}

// Status reports the CA directory as read, judged at time at.
func (v *Verifier) Status(at time.Time) Status {
	s := Status{CAs: v.cas.count}
	var subjects []string
	for key, cas := range v.cas.bySubject {
		subjects = append(subjects, key)
		for _, ca := range cas {
			if at.After(ca.cert.NotAfter) || at.Before(ca.cert.NotBefore) {
				s.Expired = append(s.Expired, fmt.Sprintf("%s (%s, valid %s to %s)", ca.subject, ca.file,
					ca.cert.NotBefore.UTC().Format(time.DateOnly), ca.cert.NotAfter.UTC().Format(time.DateOnly)))
			}
		}
	}
	sort.Strings(subjects)
	mode := v.cfg.CRL
	for _, key := range subjects {
		if mode == CRLIgnore {
			break
		}
		name := v.cas.bySubject[key][0].subject
		set := v.cas.crls[key]
		switch {
		case set != nil && set.unusable != "":
			s.RefusingCRLs = append(s.RefusingCRLs, fmt.Sprintf("%s: CRL not usable (%s)", name, set.unusable))
		case set == nil && mode != CRLTry:
			s.RefusingCRLs = append(s.RefusingCRLs, fmt.Sprintf("%s: no CRL (crl = %v)", name, mode))
		case set == nil:
		default:
			s.addStale(v.crlStale(set, at), mode)
		}
	}
	sort.Strings(s.Expired)
	return s
}

// addStale files a CRL out of date (stale is why, "" if it is not) by
// what the mode makes of it.
func (s *Status) addStale(stale string, mode CRLMode) {
	switch {
	case stale == "":
	case mode == CRLRequire:
		s.RefusingCRLs = append(s.RefusingCRLs, stale+" (crl = require)")
	default:
		s.StaleCRLs = append(s.StaleCRLs, stale)
	}
}

// VOMSDirVOs are the VOs the vomsdir dir lists a VOMS server for,
// sorted, read as New reads them.
func VOMSDirVOs(dir string) ([]string, error) {
	d, err := loadVOMSDir(dir, Limits{}.withDefaults())
	if err != nil {
		return nil, err
	}
	return (&Verifier{voms: d}).VOs(), nil
}
