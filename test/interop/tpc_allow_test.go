package interop

import (
	"path/filepath"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// TestTPCAllowList: a box with the default [tpc] allow (public servers
// only) refuses to pull from a loopback server over https:// and root://,
// whether the URL names the address or a name that resolves to it, and
// says which host and why, in the reply and in its log; nothing is left
// under the target's name.
func TestTPCAllowList(t *testing.T) {
	peers.Require(t, "curl")
	peers.Require(t, "xrdcp")
	src := startBox(t, 1, tpcAllowLoopback...)
	dst := startBox(t, 1) // the default: public addresses only
	writeRandom(t, filepath.Join(src.pools[0], "f.bin"), 1<<20)
	srcPort := src.httpsURL[strings.LastIndex(src.httpsURL, ":")+1:]

	cases := []struct {
		name, source, want string
	}{
		{"address", src.httpsURL + "/store/f.bin", "127.0.0.1 is a loopback address"},
		{"name resolving to loopback", "https://localhost:" + srcPort + "/store/f.bin", "localhost is at "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _ := run(t, true, "curl", "-sS", "-w", "\n%{http_code}", "--cacert", dst.certFile, "-X", "COPY",
				"-H", "Source: "+c.source, "-H", "Credential: none", dst.httpsURL+"/store/pulled.bin")
			t.Logf("%s", out)
			if !strings.HasSuffix(out, "\n403") || !strings.Contains(out, c.want) || !strings.Contains(out, "[tpc] allow") {
				t.Errorf("refused pull: %q, want 403 naming %q and [tpc] allow", out, c.want)
			}
			noFile(t, filepath.Join(dst.pools[0], "pulled.bin"))
		})
	}

	t.Run("push", func(t *testing.T) {
		writeRandom(t, filepath.Join(dst.pools[0], "local.bin"), 1<<20)
		out, _ := run(t, true, "curl", "-sS", "-w", "\n%{http_code}", "--cacert", dst.certFile, "-X", "COPY",
			"-H", "Destination: https://localhost:"+srcPort+"/store/pushed.bin", "-H", "Credential: none", dst.httpsURL+"/store/local.bin")
		t.Logf("%s", out)
		if !strings.Contains(out, "localhost is at ") || !strings.Contains(out, "[tpc] allow") {
			t.Errorf("refused push: %q, want the refusal naming localhost and [tpc] allow", out)
		}
		noFile(t, filepath.Join(src.pools[0], "pushed.bin"))
	})

	t.Run("root tpc", func(t *testing.T) {
		out, err := run(t, true, "xrdcp", "-f", "--tpc", "only", src.rootURL+"//store/f.bin", dst.rootURL+"//store/xpulled.bin")
		t.Logf("%s", out)
		if err == nil || !strings.Contains(out, "127.0.0.1") || !strings.Contains(out, "[tpc] allow") {
			t.Errorf("xrdcp --tpc only into a box that may not reach the source: %v\n%s", err, out)
		}
		noFile(t, filepath.Join(dst.pools[0], "xpulled.bin"))
	})

	log := dst.proc.Log.String()
	if !strings.Contains(log, "third-party copy refused") || !strings.Contains(log, "tpc refused") {
		t.Errorf("the box's log does not record the refusals:\n%s", log)
	}
}
