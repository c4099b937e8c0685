package interop

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestFederationCA: a regional director that is its federation's CA
// ([director] ca = true) signs each box's certificate at approval; the
// boxes install it, advertise with no [advertise] ca, and a user who
// downloaded the one CA file from the region follows redirects across
// the boxes with curl -L and verifies every hop.
func TestFederationCA(t *testing.T) {
	peers.Require(t, "curl")
	peers.Require(t, "xrdcp")
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\nca = true\nlocate_timeout = \"2s\"\n")
	regionConf := filepath.Join(region.state, "sitebox.toml")
	advertise := "[advertise]\nto = [" + strconv.Quote(region.httpsURL) + "]\ninterval = \"300ms\"\n" +
		approveMark + region.httpsURL + " " + regionConf + "\n"

	poolA, poolB := t.TempDir(), t.TempDir()
	wantA := writeRandom(t, filepath.Join(poolA, "a", "file.bin"), 300_000)
	wantB := writeRandom(t, filepath.Join(poolB, "b", "file.bin"), 200_000)
	boxA := startFedNode(t, "boxA", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(poolA)+"]\n"+advertise)
	boxB := startFedNode(t, "boxB", "B", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(poolB)+"]\n"+advertise)

	// What a user does first: fetch the region's CA (here without
	// verification, as with curl -k; it is the same file the director keeps).
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := insecure.Get(region.httpsURL + "/.sitebox/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	kept, _ := os.ReadFile(filepath.Join(region.state, "federation", "ca.pem"))
	if resp.StatusCode != 200 || len(kept) == 0 || !bytes.Equal(caPEM, kept) {
		t.Fatalf("GET /.sitebox/ca.pem: %d %q; the director keeps %q", resp.StatusCode, caPEM, kept)
	}
	caFile := filepath.Join(t.TempDir(), "federation-ca.pem")
	os.WriteFile(caFile, caPEM, 0o644)
	region.certFile = caFile // `sitebox federation --ca` trusts the region with it alone

	// The boxes advertise over TLS verified against the installed CA.
	waitFor(t, 15*time.Second, "boxA and boxB advertising to the region", func() bool {
		return registryHas(t, region, "boxA") && registryHas(t, region, "boxB")
	})

	for _, c := range []struct {
		url  string
		want []byte
	}{
		{region.httpsURL + "/store/a/file.bin", wantA},
		{region.httpsURL + "/store/b/file.bin", wantB},
		{boxA.httpsURL + "/store/a/file.bin", wantA},
		{boxB.httpsURL + "/store/b/file.bin", wantB},
	} {
		out := filepath.Join(t.TempDir(), "got")
		run(t, false, "curl", "-sS", "--fail", "-L", "--cacert", caFile, "-o", out, c.url)
		sameFile(t, out, c.want)
	}
	// xrdcp over roots:// verifies each hop against the same CA (XrdCl
	// reads a hashed CA directory).
	caDir := certDir(t, region)
	for _, c := range []struct {
		url  string
		want []byte
	}{{region.rootURL + "//store/a/file.bin", wantA}, {boxB.rootURL + "//store/b/file.bin", wantB}} {
		out := filepath.Join(t.TempDir(), "got")
		cmd := exec.Command("xrdcp", "-f", "-s", strings.Replace(c.url, "root://", "roots://", 1), out)
		cmd.Env = append(os.Environ(), "X509_CERT_DIR="+caDir, "XRD_REQUESTTIMEOUT=20", "XRD_CONNECTIONRETRY=1")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("xrdcp %s: %v\n%s", c.url, err, msg)
		}
		sameFile(t, out, c.want)
	}
	empty := t.TempDir()
	cmd := exec.Command("xrdcp", "-f", "-s", strings.Replace(boxB.rootURL, "root://", "roots://", 1)+"//store/b/file.bin", filepath.Join(empty, "got"))
	cmd.Env = append(os.Environ(), "X509_CERT_DIR="+empty, "XRD_REQUESTTIMEOUT=10", "XRD_CONNECTIONRETRY=1")
	if msg, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("xrdcp trusted boxB's certificate without the federation CA: %s", msg)
	}
	// Without the CA file the same request is refused: the trust comes from it.
	if out, err := run(t, true, "curl", "-sS", "--fail", "-L", "-o", "/dev/null", boxA.httpsURL+"/store/a/file.bin"); err == nil {
		t.Errorf("curl trusted boxA's certificate without the federation CA: %s", out)
	}
}
