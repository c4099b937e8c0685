package webdav

import (
	"bytes"
	"fmt"
	"hash/adler32"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/tlsutil"

	"sitebox/test/peers"
)

// TestRealCurl drives the handler with the curl binary over HTTPS with a
// tlsutil self-signed certificate, the way users and scripts do. Skipped
// without curl unless CI=true.
func TestRealCurl(t *testing.T) {
	curl := peers.Require(t, "curl")
	dir, state := t.TempDir(), t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tlsutil.LoadOrCreate("", "", state, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(New(Config{}, o, nil))
	srv.TLS = tc
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); o.Close() })

	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"-sS", "--max-time", "30", "--cacert", filepath.Join(state, "cert.pem")}, args...)
		var out, errb bytes.Buffer
		cmd := exec.Command(curl, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("curl %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}
	data := []byte(strings.Repeat("curl test data ", 5000))
	local := filepath.Join(t.TempDir(), "up")
	os.WriteFile(local, data, 0o644)
	u := srv.URL + "/store/dir/file"

	if got := run("-o", "/dev/null", "-w", "%{http_code}", "-T", local, u); got != "201" {
		t.Fatalf("PUT: %s", got)
	}
	if got := run("-o", "/dev/null", "-w", "%{http_code}", "-T", local, u); got != "204" {
		t.Fatalf("PUT again: %s", got)
	}
	if got := run(u); got != string(data) {
		t.Fatalf("GET: %d bytes, want %d", len(got), len(data))
	}
	if got := run("-r", "100-199", u); got != string(data[100:200]) {
		t.Fatalf("range: %q", got)
	}
	if got := run("-r", "0-4,10-14", u); !strings.Contains(got, "Content-Range: bytes 10-14/") || !strings.Contains(got, string(data[10:15])) {
		t.Fatalf("multi-range: %q", got)
	}
	if got := run("-o", "/dev/null", "-w", "%{http_code}", "-r", "999999-", u); got != "416" {
		t.Fatalf("unsatisfiable range: %s", got)
	}
	head := run("-I", "-H", "Want-Digest: adler32", u)
	if want := fmt.Sprintf("adler32=%08x", adler32.Checksum(data)); !strings.Contains(strings.ToLower(head), "digest: "+want) {
		t.Fatalf("HEAD with Want-Digest lacks %s:\n%s", want, head)
	}
	list := run("-X", "PROPFIND", "-H", "Depth: 1", srv.URL+"/store/dir/")
	if !strings.Contains(list, "<D:href>/store/dir/file</D:href>") || !strings.Contains(list, fmt.Sprintf("<D:getcontentlength>%d</D:getcontentlength>", len(data))) {
		t.Fatalf("PROPFIND:\n%s", list)
	}
	if got := run("-o", "/dev/null", "-w", "%{http_code}", "-X", "DELETE", u); got != "204" {
		t.Fatalf("DELETE: %s", got)
	}
}
