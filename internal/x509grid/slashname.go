package x509grid

import (
	"encoding/asn1"
	"fmt"
	"strings"
)

// SlashName renders a raw name in the slash form grid tools print and
// grid-mapfiles, VOMS .lsc files and xrootd use
// ("/DC=org/DC=example/CN=Alice"), as OpenSSL's X509_NAME_oneline does:
// short attribute names, bytes outside printable ASCII as \xHH, the
// values of a multi-valued RDN joined by '+'. Attribute types OpenSSL
// would name but this table does not appear as dotted OIDs.
func SlashName(rawName []byte) (string, error) {
	n, err := parseName(rawName)
	if err != nil {
		return "", err
	}
	return n.slash(), nil
}

func (n name) slash() string {
	var b strings.Builder
	for _, rdn := range n {
		for i, a := range rdn {
			// Values of one RDN are joined with '+', as OpenSSL 3 does.
			if i == 0 {
				b.WriteByte('/')
			} else {
				b.WriteByte('+')
			}
			b.WriteString(shortName(a.oid))
			b.WriteByte('=')
			for _, c := range a.value {
				if c < ' ' || c > '~' {
					fmt.Fprintf(&b, "\\x%02X", c)
				} else {
					b.WriteByte(c)
				}
			}
		}
	}
	return b.String()
}

// shortName is OpenSSL's short name of a DN attribute type.
func shortName(oid asn1.ObjectIdentifier) string {
	s := oid.String()
	if strings.HasPrefix(s, "2.5.4.") {
		switch s[len("2.5.4."):] {
		case "3":
			return "CN"
		case "4":
			return "SN"
		case "5":
			return "serialNumber"
		case "6":
			return "C"
		case "7":
			return "L"
		case "8":
			return "ST"
		case "9":
			return "street"
		case "10":
			return "O"
		case "11":
			return "OU"
		case "12":
			return "title"
		case "13":
			return "description"
		case "15":
			return "businessCategory"
		case "17":
			return "postalCode"
		case "41":
			return "name"
		case "42":
			return "GN"
		case "43":
			return "initials"
		case "44":
			return "generationQualifier"
		case "46":
			return "dnQualifier"
		case "65":
			return "pseudonym"
		case "97":
			return "organizationIdentifier"
		}
	}
	switch s {
	case "0.9.2342.19200300.100.1.25":
		return "DC"
	case "0.9.2342.19200300.100.1.1":
		return "UID"
	case "1.2.840.113549.1.9.1":
		return "emailAddress"
	}
	return s
}

// normalizeSlashDN folds the aliases VOMS treats as equal when it
// compares an .lsc line with a certificate's name.
func normalizeSlashDN(s string) string {
	s = strings.ReplaceAll(s, "/USERID=", "/UID=")
	s = strings.ReplaceAll(s, "/emailAddress=", "/Email=")
	return strings.ReplaceAll(s, "/E=", "/Email=")
}
