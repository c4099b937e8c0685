package interop

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// putWhileWriting holds a file open for writing over root:// with the
// XRootD Python bindings while curl PUTs the same path over https, and
// reports curl's status.
const putWhileWriting = `
import json, subprocess, sys
from XRootD import client
from XRootD.client.flags import OpenFlags
root, https, cacert, local = sys.argv[1:5]
f = client.File()
st, _ = f.open(root, OpenFlags.DELETE | OpenFlags.MAKEPATH)
out = {"open": st.ok}
f.write(b"first writer", 0)
p = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", cacert, "-T", local, https], capture_output=True, text=True)
out["put"] = p.stdout.strip()
f.close()
print(json.dumps(out))
`

// TestHTTPSOneWriter checks one writer per file across protocols, side by
// side with XrdHttp 5.5: a PUT of a file being written over root:// is
// refused with 423 and the root:// upload stays whole (both servers);
// xrdcp -f of a file a PUT is uploading is refused with 3003 and the
// PUT's data lands (sitebox; xrootd 5.5 lets the second writer in and
// the file ends up the smaller upload's, which is only logged).
func TestHTTPSOneWriter(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl", "xrootd"} {
		peers.Require(t, tool)
	}
	py := python(t)
	b := startBox(t, 1)
	x := startXrdHTTP(t, b.certFile, filepath.Join(filepath.Dir(b.certFile), "key.pem"))
	small := filepath.Join(t.TempDir(), "small")
	os.WriteFile(small, []byte("second writer\n"), 0o644)
	big := filepath.Join(t.TempDir(), "big")
	bigData := writeRandom(t, big, 1<<20)

	for _, s := range []struct{ name, root, https, prefix, data string }{
		{"xrdhttp", x.root, x.url, "", x.data},
		{"sitebox", b.rootHost, b.httpsURL, "/store", b.pools[0]},
	} {
		t.Run(s.name, func(t *testing.T) {
			out, _ := run(t, false, py, "-c", putWhileWriting, "root://"+s.root+"/"+s.prefix+"/w/a", s.https+s.prefix+"/w/a", b.certFile, small)
			var got struct {
				Open bool   `json:"open"`
				Put  string `json:"put"`
			}
			if err := json.Unmarshal([]byte(out[strings.LastIndex(out, "{"):]), &got); err != nil || !got.Open {
				t.Fatalf("probe: %v\n%s", err, out)
			}
			if got.Put != "423" {
				t.Errorf("PUT of a file being written over root://: %s, want 423 Locked", got.Put)
			}
			if data, _ := os.ReadFile(filepath.Join(s.data, "w", "a")); string(data) != "first writer" {
				t.Errorf("file after the refused PUT: %q, want the root:// writer's", data)
			}

			// A slow PUT is writing; xrdcp -f is the second writer.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			put := exec.CommandContext(ctx, "curl", "-sS", "--fail", "--limit-rate", "128K", "--cacert", b.certFile, "-T", big, s.https+s.prefix+"/w/b")
			if err := put.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- put.Wait() }()
			waitUploading(t, filepath.Join(s.data, "w"), "a")
			out, err := run(t, true, "xrdcp", "-f", small, "root://"+s.root+"/"+s.prefix+"/w/b")
			refused := err != nil && strings.Contains(out, "[3003]")
			if err := <-done; err != nil {
				t.Fatalf("PUT: %v", err)
			}
			if s.name == "xrdhttp" {
				landed, _ := os.ReadFile(filepath.Join(s.data, "w", "b"))
				t.Logf("XrdHttp: xrdcp -f during a PUT refused: %v; the file has %d bytes of the PUT's %d", refused, len(landed), len(bigData))
				return
			}
			if !refused {
				t.Errorf("xrdcp -f during a PUT: %v %s; want refused with 3003", err, out)
			}
			sameFile(t, filepath.Join(s.data, "w", "b"), bigData)
		})
	}
}

// waitUploading waits until dir holds a file other than skip with data
// in it: a PUT under way (under its temporary name on sitebox).
func waitUploading(t *testing.T, dir, skip string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && e.Name() != skip && fi.Mode().IsRegular() && fi.Size() > 0 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no upload appeared in %s", dir)
}
