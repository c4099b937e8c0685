package client

import (
	"errors"
	"fmt"
	"strings"

	"sitebox/internal/outbound"
)

// errKrb5Forward is why a server that wants the client's TGT forwarded
// ("krb5,<principal>,fwd") is not answered with krb5.
var errKrb5Forward = errors.New("krb5: the server asks for a forwarded ticket (fwd), which this client does not send")

// krb5Credential is XrdSeckrb5's credential for the login's krb5
// parameters ("xrootd/host@REALM", with ",fwd" when the server wants the
// TGT forwarded): "krb5\0" and a Kerberos AP-REQ for that principal. A
// server that needs no ticket forwarded accepts it in one kXR_auth.
func krb5Credential(get func() (*outbound.Kerberos, error), params string) ([]byte, error) {
	principal, opts, _ := strings.Cut(params, ",")
	principal = strings.TrimSpace(principal)
	if principal == "" {
		return nil, errors.New("krb5: the server names no service principal")
	}
	if strings.Contains(opts, "fwd") {
		return nil, errKrb5Forward
	}
	k, err := get()
	if err != nil {
		return nil, fmt.Errorf("krb5: %w", err)
	}
	req, err := k.APReq(principal)
	if err != nil {
		return nil, fmt.Errorf("krb5: %w", err)
	}
	return append([]byte("krb5\x00"), req...), nil
}
