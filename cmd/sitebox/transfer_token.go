package main

import (
	"os"

	"sitebox/internal/outbound"
)

// bearerToken finds the bearer token the way WLCG clients do:
// $BEARER_TOKEN, the file named by $BEARER_TOKEN_FILE, else
// $XDG_RUNTIME_DIR/bt_u<uid> or /tmp/bt_u<uid> (outbound.FindUserToken).
// No token is not an error (most boxes serve without one); an
// unreadable or empty file is.
func bearerToken() (string, error) {
	tok, _, err := outbound.FindUserToken(os.Getenv, os.Getuid())
	return tok, err
}

// userKerberos adds the user's Kerberos tickets, where kinit leaves them
// and xrdcp and curl --negotiate find them: the credential cache file
// $KRB5CCNAME names (FILE:), else /tmp/krb5cc_<uid>, with the krb5.conf
// of $KRB5_CONFIG, else /etc/krb5.conf. They are offered to servers that
// ask for Kerberos (krb5 on root://, Negotiate on https://). A problem
// with them (a KEYRING: cache, a cache that is not the user's own) is
// named when a server asks for them, so it does not stop reading from
// servers that need none.
func userKerberos(opts *outbound.Options) {
	file, ok, err := outbound.UserCCache(os.Getenv, os.Getuid())
	switch {
	case err != nil:
		opts.Kerberos = func() (*outbound.Kerberos, error) { return nil, err }
	case ok:
		opts.Kerberos = outbound.NewKerberosFile(file, os.Getuid(), outbound.KerberosConfigFile(os.Getenv)).Get
	}
}
