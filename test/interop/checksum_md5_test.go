package interop

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// md5Config offers md5 on a box (startBox's flags replace its export).
const md5Config = "[server]\nchecksums = [\"md5\"]\n"

// md5Server is one server the md5 checks run against.
type md5Server struct {
	name      string
	rootHost  string // host:port of root://
	https     string // https://host:port
	prefix    string // namespace path of the test file's directory
	hasConfig bool   // "md5" in query config chksum
}

// TestChecksumMD5 compares md5, where configured, side by side with
// xrootd 5.5 (xrootd.chksum adler32 md5) and XrdHttp: xrdcp --cksum md5
// and md5:source, xrdfs query checksum and query
// config chksum, gfal-sum MD5 and Want-Digest: md5, on a box and
// through caches of it over root:// and https://; a box without md5
// configured refuses it clearly. Third-party copies verified with md5:
// gfal-copy -K MD5 from XrdHttp to a box, xrdcp --tpc only --cksum md5
// from xrootd to a box.
func TestChecksumMD5(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "gfal-sum", "gfal-copy", "curl", "xrootd"} {
		peers.Require(t, tool)
	}
	bundle := tpcTrust(t)
	b := startBox(t, 1, append([]string{"--config", dosConfig(t, md5Config)}, tpcAllowLoopback...)...)
	plain := startBox(t, 1)
	x := startXrdHTTPConf(t, b.certFile, filepath.Join(filepath.Dir(b.certFile), "key.pem"),
		[]string{"xrootd.chksum adler32 md5", "ofs.tpc pgm /usr/bin/xrdcp --server"})
	trustCerts(t, bundle, b.certFile)
	data := writeRandom(t, filepath.Join(x.data, "m", "f.bin"), 3<<20+7)
	os.MkdirAll(filepath.Join(b.pools[0], "m"), 0o755)
	os.WriteFile(filepath.Join(b.pools[0], "m", "f.bin"), data, 0o644)
	os.MkdirAll(filepath.Join(plain.pools[0], "m"), 0o755)
	os.WriteFile(filepath.Join(plain.pools[0], "m", "f.bin"), data, 0o644)
	sum := md5.Sum(data)
	want := hex.EncodeToString(sum[:])
	cacheRoot := startMD5Cache(t, b.rootURL)
	cacheHTTPS := startMD5Cache(t, b.httpsURL)

	for _, s := range []md5Server{
		{"xrootd", x.root, x.url, "/m", true},
		{"sitebox", b.rootHost, b.httpsURL, "/store/m", true},
		{"cache over root", cacheRoot.rootHost, cacheRoot.httpsURL, "/store/m", true},
		{"cache over https", cacheHTTPS.rootHost, cacheHTTPS.httpsURL, "/store/m", true},
	} {
		t.Run(s.name, func(t *testing.T) { checkMD5(t, s, want) })
	}
	t.Run("not configured", func(t *testing.T) {
		out, err := run(t, true, "xrdcp", "-f", "--cksum", "md5", plain.rootURL+"//store/m/f.bin", filepath.Join(t.TempDir(), "f"))
		if err == nil || !strings.Contains(out, "[3013]") || !strings.Contains(out, "not offered") {
			t.Errorf("xrdcp --cksum md5 from a box without md5: %v\n%s", err, out)
		}
		if out, err := toolOut(t, "gfal-sum", append(gfalInsecure, plain.httpsURL+"/store/m/f.bin", "MD5")...); err == nil {
			t.Errorf("gfal-sum MD5 of a box without md5: %s", out)
		}
		if d := wantDigest(t, plain.httpsURL+"/store/m/f.bin", "md5"); d != "" {
			t.Errorf("Want-Digest: md5 of a box without md5: Digest %q, want none", d)
		}
	})
	t.Run("gfal-copy -K MD5 from XrdHttp", func(t *testing.T) {
		out, err := gfalCopyMD5(t, x.url+"/m/f.bin", b.httpsURL+"/store/m/from-xrdhttp.bin")
		if err != nil {
			t.Fatalf("gfal-copy -K MD5: %v\n%s", err, out)
		}
		sameFile(t, filepath.Join(b.pools[0], "m", "from-xrdhttp.bin"), data)
	})
	t.Run("xrdcp --tpc only --cksum md5 from xrootd", func(t *testing.T) {
		run(t, false, "xrdcp", "-f", "--tpc", "only", "--cksum", "md5", "root://"+x.root+"//m/f.bin", b.rootURL+"//store/m/from-xrootd.bin")
		sameFile(t, filepath.Join(b.pools[0], "m", "from-xrootd.bin"), data)
	})
}

// checkMD5 runs the md5 checks against one server.
func checkMD5(t *testing.T, s md5Server, want string) {
	file := s.prefix + "/f.bin"
	out, _ := run(t, false, "xrdfs", s.rootHost, "query", "config", "chksum")
	if strings.Contains(out, "md5") != s.hasConfig {
		t.Errorf("query config chksum: %q", out)
	}
	out, _ = run(t, false, "xrdfs", s.rootHost, "query", "checksum", file+"?cks.type=md5")
	if strings.TrimSpace(out) != "md5 "+want {
		t.Errorf("query checksum ?cks.type=md5: %q, want %q", out, "md5 "+want)
	}
	// The source's md5 (asked with cks.type=md5), compared with the
	// copy's. (md5:print asks the server nothing: xrdcp prints the md5 it
	// computes of the copy.)
	for _, mode := range []string{"md5", "md5:source"} {
		run(t, false, "xrdcp", "-f", "--cksum", mode, "root://"+s.rootHost+"/"+file, filepath.Join(t.TempDir(), "f"))
	}
	out, err := toolOut(t, "gfal-sum", append(gfalInsecure, s.https+file, "MD5")...)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out), " "+want) {
		t.Errorf("gfal-sum MD5: %v %q, want %s", err, out, want)
	}
	raw, _ := hex.DecodeString(want)
	if d := wantDigest(t, s.https+file, "md5"); d != "md5="+base64.StdEncoding.EncodeToString(raw) {
		t.Errorf("Want-Digest: md5: Digest %q", d)
	}
}

// wantDigest sends HEAD with Want-Digest and returns the Digest header.
func wantDigest(t *testing.T, url, algo string) string {
	t.Helper()
	out, _ := run(t, false, "curl", "-sSkI", "-H", "Want-Digest: "+algo, url)
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Digest") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// startMD5Cache runs a cache of /store through upstream, offering md5.
func startMD5Cache(t *testing.T, upstream string) *box {
	t.Helper()
	state := t.TempDir()
	rp, _ := peers.FreePort()
	hp, _ := peers.FreePort()
	conf := md5Config + "state_dir = " + strconv.Quote(state) + "\n" +
		"[root]\naddr = \"127.0.0.1:" + strconv.Itoa(rp) + "\"\n" +
		"[https]\naddr = \"127.0.0.1:" + strconv.Itoa(hp) + "\"\n" +
		"[cache]\ndir = " + strconv.Quote(t.TempDir()) + "\nupstream_insecure = true\n" +
		"[[cache.route]]\nprefix = \"/store\"\nupstreams = [" + strconv.Quote(upstream) + "]\n"
	file := filepath.Join(state, "sitebox.toml")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return runCache(t, rp, hp, state, "--config", file)
}

// gfalCopyMD5 runs a pulling third-party copy verified with md5 at both
// ends (gfal2 asks each for Want-Digest: md5).
func gfalCopyMD5(t *testing.T, src, dst string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{"-f", "-K", "MD5", "--copy-mode", "pull"}, gfalInsecure...), src, dst)
	cmd := exec.CommandContext(ctx, "gfal-copy", args...)
	// A token makes gfal2 send "Credential: none" (see gfalCopy).
	cmd.Env = append(os.Environ(), "BEARER_TOKEN=tpc-test", "GFAL_PYTHONBIN=/usr/bin/python3")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
