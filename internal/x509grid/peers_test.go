package x509grid

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The peers whose decisions the tests compare with this package's.
const (
	// peerOpenSSL is `openssl verify -allow_proxy_certs -CApath`, by
	// default with -crl_check_all (CRLs required for every CA).
	peerOpenSSL = "openssl verify"
	// peerVOMSVerify is voms-verify: OpenSSL with VOMS' (Globus') proxy
	// callback, the chain check of the VOMS and gsi libraries.
	peerVOMSVerify = "voms-verify"
	// peerLibVOMS is libvomsapi, as libXrdVoms calls it, on the AC.
	peerLibVOMS = "libvomsapi"
)

// peerVerdict is a peer's decision and what it printed.
type peerVerdict struct {
	accepted bool
	output   string
}

// opensslVerify verifies a proxy file's first certificate with the rest
// of the file as untrusted intermediates.
func opensslVerify(t *testing.T, caDir, chainFile string, flags []string) peerVerdict {
	t.Helper()
	args := append([]string{"verify", "-allow_proxy_certs", "-CApath", caDir}, flags...)
	args = append(args, "-untrusted", chainFile, chainFile)
	out, err := exec.Command("openssl", args...).CombinedOutput()
	return peerVerdict{accepted: err == nil && strings.Contains(string(out), ": OK"), output: string(out)}
}

func vomsVerify(t *testing.T, caDir, chainFile string) peerVerdict {
	t.Helper()
	cmd := exec.Command("voms-verify")
	cmd.Env = append(os.Environ(), "X509_USER_CERT="+chainFile, "X509_CERT_DIR="+caDir)
	out, err := cmd.CombinedOutput()
	return peerVerdict{accepted: err == nil && strings.Contains(string(out), "verified succ"), output: string(out)}
}

// libVOMSResult is what testdata/voms_peer.py reports.
type libVOMSResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	VOs   []struct {
		VO    string   `json:"vo"`
		FQANs []string `json:"fqans"`
	} `json:"vos"`
}

// libVOMS asks libvomsapi which ACs of a proxy file it accepts.
func libVOMS(t *testing.T, caDir, vomsDir, proxyFile string) libVOMSResult {
	t.Helper()
	cmd := exec.Command("python3", "testdata/voms_peer.py", proxyFile)
	cmd.Env = append(os.Environ(), "X509_CERT_DIR="+caDir, "X509_VOMS_DIR="+vomsDir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("voms_peer.py: %v", err)
	}
	var r libVOMSResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("voms_peer.py said %q: %v", out, err)
	}
	return r
}
