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
