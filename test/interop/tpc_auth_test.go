package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/test/peers"
)

const tpcTokenPolicy = `
[[auth.namespace]]
prefix = "/store/tok"
read = "token"
`

// TestHTTPTPCTokens: the box that runs an HTTP-TPC checks the request's
// own token against its store (storage.create to pull into it,
// storage.read to push from it), and the other box checks the
// TransferHeaderAuthorization token it is sent.
func TestHTTPTPCTokens(t *testing.T) {
	peers.Require(t, "curl")
	bundle := tpcTrust(t)
	poolA, poolB := t.TempDir(), t.TempDir()
	export := func(pool string) string {
		return "[[export]]\nprefix = \"/store\"\npools = [\"" + pool + "\"]\n" + tpcTokenPolicy + tpcAllowLoopbackTOML
	}
	a := startIssuerNode(t, "a", "A", export(poolA))
	b := startIssuerNode(t, "b", "B", export(poolB))
	trustCerts(t, bundle, a.certFile, b.certFile)
	data := writeRandom(t, filepath.Join(poolA, "tok/f"), 2<<20)
	os.MkdirAll(filepath.Join(poolB, "tok"), 0o755)
	readA := a.token(t, "u", "", "storage.read:/store")
	createA := a.token(t, "u", "", "storage.create:/store")
	readB := b.token(t, "u", "", "storage.read:/store")
	// Writing asks whether the target exists first (as PUT does), which
	// needs storage.read: FTS's destination tokens carry both.
	createB := b.token(t, "u", "", "storage.read:/store,storage.create:/store")

	copyAs := func(cacert, target string, hdr ...string) (code, body string) {
		args := []string{"-sS", "--cacert", cacert, "-X", "COPY", "-w", "\n%{http_code}"}
		for _, h := range hdr {
			args = append(args, "-H", h)
		}
		out, _ := run(t, true, "curl", append(args, target)...)
		i := strings.LastIndex(out, "\n")
		return out[i+1:], out[:i]
	}
	src := "Source: " + a.httpsURL + "/store/tok/f"
	tests := []struct {
		name, target, landed string
		hdr                  []string
		wantCode, wantBody   string
	}{
		{"pull with both tokens", b.httpsURL + "/store/tok/pulled", filepath.Join(poolB, "tok/pulled"),
			[]string{src, "Authorization: Bearer " + createB, "TransferHeaderAuthorization: Bearer " + readA}, "202", "success: Created"},
		{"pull without storage.create here", b.httpsURL + "/store/tok/no-create", filepath.Join(poolB, "tok/no-create"),
			[]string{src, "Authorization: Bearer " + readB, "TransferHeaderAuthorization: Bearer " + readA}, "403", ""},
		{"pull without a token for the source", b.httpsURL + "/store/tok/no-remote", filepath.Join(poolB, "tok/no-remote"),
			[]string{src, "Authorization: Bearer " + createB}, "403", ""},
		{"push with both tokens", a.httpsURL + "/store/tok/f", filepath.Join(poolB, "tok/pushed"),
			[]string{"Destination: " + b.httpsURL + "/store/tok/pushed", "Authorization: Bearer " + readA, "TransferHeaderAuthorization: Bearer " + createB}, "202", "success: Created"},
		{"push without storage.read here", a.httpsURL + "/store/tok/f", filepath.Join(poolB, "tok/no-read"),
			[]string{"Destination: " + b.httpsURL + "/store/tok/no-read", "Authorization: Bearer " + createA, "TransferHeaderAuthorization: Bearer " + createB}, "403", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cacert := b.certFile
			if strings.HasPrefix(tc.target, a.httpsURL) {
				cacert = a.certFile
			}
			code, body := copyAs(cacert, tc.target, tc.hdr...)
			if code != tc.wantCode || !strings.Contains(body, tc.wantBody) {
				t.Fatalf("COPY: %s %q, want %s %q", code, body, tc.wantCode, tc.wantBody)
			}
			if tc.wantCode == "202" {
				sameFile(t, tc.landed, data)
			} else {
				noFile(t, tc.landed)
			}
		})
	}
}
