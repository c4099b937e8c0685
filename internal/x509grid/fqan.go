package x509grid

import (
	"encoding/asn1"
	"fmt"
	"strings"
)

// oidVOMSAttributes is VOMS' attribute type ("idatcap"): an
// IetfAttrSyntax whose policy authority is "<vo>://<host>:<port>" and
// whose values are the FQANs.
const oidVOMSAttributes = "1.3.6.1.4.1.8005.100.100.4"

// vomsAttributes is what an AC's idatcap attribute says.
type vomsAttributes struct {
	vo    string
	uri   string // host:port
	host  string
	fqans []FQAN
}

// readVOMSAttributes finds the AC's one idatcap attribute and reads
//
//	IetfAttrSyntax ::= SEQUENCE {
//	    policyAuthority [0] GeneralNames OPTIONAL,
//	    values SEQUENCE OF OCTET STRING }
//
// requiring, as VOMS does, one URI policy authority and FQANs of the VO.
// On a refusal it still returns the VO and server, once read, to name
// them.
func readVOMSAttributes(attrs []acAttribute, lim Limits) (*vomsAttributes, error) {
	var found *acAttribute
	for i := range attrs {
		if attrs[i].Type.String() == oidVOMSAttributes {
			if found != nil {
				return nil, acErr("two VOMS attributes")
			}
			found = &attrs[i]
		}
	}
	if found == nil {
		return nil, acErr("no VOMS attribute (%s)", oidVOMSAttributes)
	}
	if len(found.Values) != 1 {
		return nil, acErr("the VOMS attribute has %d values, not one", len(found.Values))
	}
	var syntax struct {
		Authority asn1.RawValue
		Values    []asn1.RawValue
	}
	if rest, err := asn1.Unmarshal(found.Values[0].FullBytes, &syntax); err != nil || len(rest) != 0 {
		return nil, acErr("unreadable VOMS attribute")
	}
	va, err := readPolicyAuthority(syntax.Authority)
	if err != nil {
		return nil, err
	}
	if len(syntax.Values) == 0 {
		return va, acErr("no FQAN")
	}
	if len(syntax.Values) > lim.MaxFQANs {
		return va, acErr("%d FQANs (limit %d)", len(syntax.Values), lim.MaxFQANs)
	}
	for _, raw := range syntax.Values {
		if raw.Class != asn1.ClassUniversal || raw.Tag != asn1.TagOctetString || raw.IsCompound {
			return va, acErr("an FQAN is not an OCTET STRING")
		}
		if len(raw.Bytes) > lim.MaxFQANLength {
			return va, acErr("an FQAN of %d bytes (limit %d)", len(raw.Bytes), lim.MaxFQANLength)
		}
		f, err := ParseFQAN(string(raw.Bytes))
		if err != nil {
			return va, acErr("%v", err)
		}
		if vo, _, _ := strings.Cut(strings.TrimPrefix(f.Group, "/"), "/"); vo != va.vo {
			return va, acErr("FQAN %q is not of VO %s", f.Value, va.vo)
		}
		va.fqans = append(va.fqans, f)
	}
	return va, nil
}

// readPolicyAuthority reads the one URI "<vo>://<host>:<port>".
func readPolicyAuthority(raw asn1.RawValue) (*vomsAttributes, error) {
	if raw.Class != asn1.ClassContextSpecific || raw.Tag != 0 || !raw.IsCompound {
		return nil, acErr("no VOMS policy authority (VO and server)")
	}
	names, err := rawElements(raw.Bytes, 1)
	if err != nil || len(names) != 1 || names[0].Class != asn1.ClassContextSpecific || names[0].Tag != 6 || names[0].IsCompound {
		return nil, acErr("the VOMS policy authority is not one URI")
	}
	uri := string(names[0].Bytes)
	vo, hostport, ok := strings.Cut(uri, "://")
	host, _, hasPort := strings.Cut(hostport, ":")
	if !ok || !hasPort || host == "" || !validVOName(vo) || !printableASCII(hostport) {
		return nil, acErr("policy authority %q is not <vo>://<host>:<port>", uri)
	}
	return &vomsAttributes{vo: vo, uri: hostport, host: host}, nil
}

// validVOName accepts VO names as VOMS and the vomsdir's directory names
// can carry them ("cms", "vo.example.org").
func validVOName(vo string) bool {
	if vo == "" || vo == "." || vo == ".." || len(vo) > 255 {
		return false
	}
	for _, c := range []byte(vo) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func printableASCII(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// ParseFQAN reads "/vo/group/Role=role/Capability=cap" (role and
// capability optional). It is stricter than VOMS: group components are
// non-empty, neither "." nor "..", and hold no "=", and the whole is
// printable ASCII without spaces, since groups end up in policy
// decisions and logs. "NULL" role and capability read as empty.
func ParseFQAN(s string) (FQAN, error) {
	f := FQAN{Value: s}
	if !printableASCII(s) || !strings.HasPrefix(s, "/") {
		return FQAN{}, fmt.Errorf("FQAN %q: not /vo/group… in printable ASCII", s)
	}
	rest := s
	if i := strings.Index(rest, "/Capability="); i >= 0 {
		f.Capability, rest = rest[i+len("/Capability="):], rest[:i]
	}
	if i := strings.Index(rest, "/Role="); i >= 0 {
		f.Role, rest = rest[i+len("/Role="):], rest[:i]
	}
	f.Group = rest
	for _, part := range []string{f.Role, f.Capability} {
		if strings.ContainsAny(part, "/=") {
			return FQAN{}, fmt.Errorf("FQAN %q: role and capability come last, in that order", s)
		}
	}
	for _, c := range strings.Split(strings.TrimPrefix(f.Group, "/"), "/") {
		if c == "" || c == "." || c == ".." || strings.Contains(c, "=") {
			return FQAN{}, fmt.Errorf("FQAN %q: group %q has an empty or invalid component", s, f.Group)
		}
	}
	if f.Role == "NULL" {
		f.Role = ""
	}
	if f.Capability == "NULL" {
		f.Capability = ""
	}
	return f, nil
}
