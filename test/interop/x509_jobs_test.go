package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/internal/x509grid/x509test"
	"sitebox/test/peers"
)

// A grid user submits a job to the jobs API over https with curl, its
// VOMS proxy the client certificate: an [[auth.x509.map]] rule gives
// testvo's members the compute scopes. The job runs (as a slot user)
// and is the user's: owned by the DN under x509:<its CA DN>, listed and
// read with the same proxy, its output there; another member of the VO
// does not see it, and a proxy no rule maps may not submit.
func TestX509Jobs(t *testing.T) {
	peers.Require(t, "curl")
	c := makeGridCreds(t)
	b := c.pki.Scratch(t)
	bob := c.pki.VOMSProxyOf(b, c.pki.Bob, nil).Chain
	b.OK(t)
	box := startX509Box(t, c, jobsConf(t, []string{"sbxslot4"}, "cpus = 1\n"),
		"[[auth.x509.map]]\nfqan = \"/testvo\"\nscopes = [\"compute.create\", \"compute.read\", \"compute.cancel\"]\n")
	api := box.httpsURL + "/api/v1/jobs"
	job := `{"specs":[{"executable":"/bin/echo","arguments":["hello from the grid"],"domains":["local"]}]}`

	code, body := curlCert(t, c, c.plain, "POST", api, job)
	if code != 403 || !strings.Contains(body, "the certificate's mapping ([auth.x509]) lacks the compute.create scope") {
		t.Errorf("an unmapped proxy submits: %d %s", code, body)
	}
	code, body = curlCert(t, c, c.voms, "POST", api, job)
	var sub struct{ Jobs []jobs.Job }
	if code != 201 || json.Unmarshal([]byte(body), &sub) != nil || len(sub.Jobs) != 1 {
		t.Fatalf("submit: %d %s", code, body)
	}
	j := sub.Jobs[0]
	if j.Owner != x509test.AliceDN || j.Issuer != "x509:"+x509test.RootDN || j.VO != x509test.TestVO {
		t.Errorf("the job is %q of %q (VO %q), want %q of x509:%s (VO testvo)", j.Owner, j.Issuer, j.VO, x509test.AliceDN, x509test.RootDN)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !j.State.Final() && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		code, body = curlCert(t, c, c.voms, "GET", api+"/"+j.ID, "")
		if code != 200 || json.Unmarshal([]byte(body), &j) != nil {
			t.Fatalf("the owner reads the job: %d %s", code, body)
		}
	}
	if j.State != jobs.Completed || j.Owner != x509test.AliceDN || j.Issuer != "x509:"+x509test.RootDN {
		t.Fatalf("the job: %s (%s), owner %q of %q", j.State, j.Reason, j.Owner, j.Issuer)
	}
	if code, body = curlCert(t, c, c.voms, "GET", api+"/"+j.ID+"/logs", ""); code != 200 || !strings.Contains(body, "hello from the grid") {
		t.Errorf("the owner reads the job's output: %d %s", code, body)
	}
	if code, body = curlCert(t, c, c.voms, "GET", api, ""); code != 200 || !strings.Contains(body, j.ID) {
		t.Errorf("the owner lists its jobs: %d %s", code, body)
	}
	if code, body = curlCert(t, c, bob, "GET", api+"/"+j.ID, ""); code != 404 || !strings.Contains(body, "no job "+j.ID+" of yours") {
		t.Errorf("another member of the VO reads the job: %d %s", code, body)
	}
}

// curlCert sends a request with curl, the proxy as its client
// certificate, and returns the status and body.
func curlCert(t *testing.T, c *gridCreds, proxy, method, url, body string) (int, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "body")
	args := []string{"-sS", "--capath", c.pki.CADir, "--cert", proxy, "--key", proxy, "-X", method, "-o", out, "-w", "%{http_code}"}
	if body != "" {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", body)
	}
	status, err := toolRun(t, nil, "curl", append(args, url)...)
	if err != nil {
		t.Fatalf("curl %s %s: %v %s", method, url, err, status)
	}
	code, _ := strconv.Atoi(strings.TrimSpace(status))
	b, _ := os.ReadFile(out)
	return code, string(b)
}
