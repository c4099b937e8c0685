package main

import (
	"fmt"
	"os"
	"strings"

	"sitebox/internal/outbound"
)

// bearerToken finds the https:// bearer token the way WLCG clients do:
// $BEARER_TOKEN, else the file named by $BEARER_TOKEN_FILE. No token is
// not an error (most boxes serve without one); an unreadable file is.
func bearerToken() (string, error) {
	if t := strings.TrimSpace(os.Getenv("BEARER_TOKEN")); t != "" {
		return t, nil
	}
	name := os.Getenv("BEARER_TOKEN_FILE")
	if name == "" {
		return "", nil
	}
	t, err := outbound.ReadToken(name)
	if err != nil {
		return "", fmt.Errorf("BEARER_TOKEN_FILE: %w", err)
	}
	return t, nil
}
