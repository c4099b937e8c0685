package x509grid

import (
	"os"
	"testing"
	"time"

	"sitebox/internal/x509grid/x509test"
)

// The tests' credentials are made by the real tools at test time
// (x509test): openssl for CAs, user certificates, CRLs and RFC 3820
// proxies, grid-proxy-init for Globus proxies, voms-proxy-fake for VOMS
// proxies. Nothing with a key is committed.
type (
	builder = x509test.Builder
	cred    = x509test.Cred
	testCA  = x509test.CA
)

// extensionsConf holds every extension profile the tests issue with.
const extensionsConf = x509test.ExtensionsConf

func requireTools(t testing.TB, tools ...string) { t.Helper(); x509test.RequireTools(t, tools...) }
func toolsPresent(tools ...string) bool          { return x509test.ToolsPresent(tools...) }

// readPEM reads a test file.
func readPEM(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func ago(d time.Duration) string   { return x509test.Ago(d) }
func ahead(d time.Duration) string { return x509test.Ahead(d) }
