package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sitebox/test/peers"
)

// tpcEnv is the four servers of the TPC benchmark.
type tpcEnv struct {
	pairs []tpcPair
	procs []*peers.Process
	// restoreEnv undoes the SSL_CERT_FILE setting the boxes inherit.
	restoreEnv func()
}

func (e *tpcEnv) stop() {
	for _, p := range e.procs {
		p.Stop()
	}
	if e.restoreEnv != nil {
		e.restoreEnv()
	}
}

func newTPCEnv(ctx context.Context, cfg TPCConfig) (*tpcEnv, error) {
	env := &tpcEnv{}
	dirs := map[string]string{}
	for _, d := range []string{"src", "dst", "xsrc", "xdst", "ca", "bsrc", "bdst"} {
		dirs[d] = filepath.Join(cfg.WorkDir, d)
		if err := os.MkdirAll(dirs[d], 0o755); err != nil {
			return env, err
		}
	}
	if err := makeFile(filepath.Join(dirs["src"], "bench.dat"), cfg.FileSize); err != nil {
		return env, err
	}
	for _, d := range []string{"xsrc", "bsrc"} {
		if err := linkOrCopy(filepath.Join(dirs["src"], "bench.dat"), filepath.Join(dirs[d], "bench.dat")); err != nil {
			return env, err
		}
	}
	// The boxes check each other's certificate against the system roots,
	// which Go reads from SSL_CERT_FILE at the first check: after both
	// boxes made theirs. All four servers use the first box's.
	bundle := filepath.Join(dirs["ca"], "bundle.pem")
	old, had := os.LookupEnv("SSL_CERT_FILE")
	os.Setenv("SSL_CERT_FILE", bundle)
	env.restoreEnv = func() {
		if had {
			os.Setenv("SSL_CERT_FILE", old)
		} else {
			os.Unsetenv("SSL_CERT_FILE")
		}
	}
	state := filepath.Join(cfg.WorkDir, "state1")
	b1, b1root, b1https, err := startTPCBox(ctx, cfg.Sitebox, dirs["src"], state, "")
	if err != nil {
		return env, err
	}
	env.procs = append(env.procs, b1)
	cert, key := filepath.Join(state, "tls", "cert.pem"), filepath.Join(state, "tls", "key.pem")
	b2, b2root, b2https, err := startTPCBox(ctx, cfg.Sitebox, dirs["dst"], filepath.Join(cfg.WorkDir, "state2"), cert+"|"+key)
	if err != nil {
		return env, err
	}
	env.procs = append(env.procs, b2)
	if err := linkOrCopy(cert, bundle); err != nil {
		return env, err
	}
	caDir := filepath.Join(dirs["ca"], "x509")
	if err := makeCADir(ctx, caDir, cert); err != nil {
		return env, err
	}
	x1, x1root, x1https, err := startTPCXrootd(ctx, cfg.WorkDir, "benchtpc1", dirs["xsrc"], cert, key, caDir)
	if err != nil {
		return env, err
	}
	env.procs = append(env.procs, x1)
	x2, x2root, x2https, err := startTPCXrootd(ctx, cfg.WorkDir, "benchtpc2", dirs["xdst"], cert, key, caDir)
	if err != nil {
		return env, err
	}
	env.procs = append(env.procs, x2)
	if cfg.Baseline != "" {
		pair, err := startTPCBoxPair(ctx, cfg.Baseline, dirs["bsrc"], dirs["bdst"], filepath.Join(cfg.WorkDir, "bstate"), cert+"|"+key, cfg.Streams)
		env.procs = append(env.procs, pair.procs...)
		if err != nil {
			return env, fmt.Errorf("baseline: %w", err)
		}
		env.pairs = append(env.pairs, pair)
	}
	env.pairs = append([]tpcPair{
		{name: "sitebox", procs: []*peers.Process{b1, b2},
			root:  xrdcpTPC(b1root+"//store/bench.dat", b2root+"//store/out.dat"),
			https: httpTPC(b2https+"/store/out.dat", b1https+"/store/bench.dat", cfg.Streams),
			push:  httpPush(b1https+"/store/bench.dat", b2https+"/store/out.dat"),
			put:   httpPut(filepath.Join(dirs["src"], "bench.dat"), b2https+"/store/up.dat")},
		{name: "xrootd", procs: []*peers.Process{x1, x2},
			root:  xrdcpTPC(x1root+"//bench.dat", x2root+"//out.dat"),
			https: httpTPC(x2https+"/out.dat", x1https+"/bench.dat", cfg.Streams),
			push:  httpPush(x1https+"/bench.dat", x2https+"/out.dat"),
			put:   httpPut(filepath.Join(dirs["src"], "bench.dat"), x2https+"/up.dat")},
	}, env.pairs...)
	return env, nil
}

// startTPCBoxPair starts two boxes of bin, serving src and dst, with the
// certificate certKey ("cert|key"), as the pair "sitebox-baseline"; its
// HTTP-TPC copies ask for streams (httpTPC).
func startTPCBoxPair(ctx context.Context, bin, src, dst, state, certKey string, streams int) (tpcPair, error) {
	pair := tpcPair{name: "sitebox-baseline"}
	b1, b1root, b1https, err := startTPCBox(ctx, bin, src, state+"1", certKey)
	if err != nil {
		return pair, err
	}
	pair.procs = append(pair.procs, b1)
	b2, b2root, b2https, err := startTPCBox(ctx, bin, dst, state+"2", certKey)
	if err != nil {
		return pair, err
	}
	pair.procs = append(pair.procs, b2)
	pair.root = xrdcpTPC(b1root+"//store/bench.dat", b2root+"//store/out.dat")
	pair.https = httpTPC(b2https+"/store/out.dat", b1https+"/store/bench.dat", streams)
	pair.push = httpPush(b1https+"/store/bench.dat", b2https+"/store/out.dat")
	pair.put = httpPut(filepath.Join(src, "bench.dat"), b2https+"/store/up.dat")
	return pair, nil
}

// startTPCBox serves pool as /store; certKey ("cert|key") gives it a
// certificate to use instead of making one.
func startTPCBox(ctx context.Context, bin, pool, state, certKey string) (p *peers.Process, rootURL, httpsURL string, err error) {
	rp, err := peers.FreePort()
	if err != nil {
		return nil, "", "", err
	}
	hp, err := peers.FreePort()
	if err != nil {
		return nil, "", "", err
	}
	if certKey != "" {
		cert, key, _ := strings.Cut(certKey, "|")
		if err := os.MkdirAll(filepath.Join(state, "tls"), 0o700); err != nil {
			return nil, "", "", err
		}
		for src, dst := range map[string]string{cert: "cert.pem", key: "key.pem"} {
			if err := linkOrCopy(src, filepath.Join(state, "tls", dst)); err != nil {
				return nil, "", "", err
			}
		}
	}
	p, err = peers.StartSitebox(ctx, bin, []int{rp, hp}, "serve", "--export", "/store="+pool,
		"--root-addr", "127.0.0.1:"+strconv.Itoa(rp), "--https-addr", "127.0.0.1:"+strconv.Itoa(hp),
		"--state-dir", state, "--log-level", "warn",
		// Every server of the benchmark is on loopback, which a box's
		// default [tpc] allow refuses.
		"--tpc-allow", "127.0.0.1")
	if err != nil {
		return nil, "", "", fmt.Errorf("start sitebox: %w", err)
	}
	return p, "root://127.0.0.1:" + strconv.Itoa(rp), "https://127.0.0.1:" + strconv.Itoa(hp), nil
}

// startTPCXrootd runs xrootd with TLS, XrdHttp and both TPC handlers.
func startTPCXrootd(ctx context.Context, work, name, data, cert, key, caDir string) (*peers.Process, string, string, error) {
	rp, err := peers.FreePort()
	if err != nil {
		return nil, "", "", err
	}
	hp, err := peers.FreePort()
	if err != nil {
		return nil, "", "", err
	}
	xwork := filepath.Join(work, name)
	if err := os.MkdirAll(xwork, 0o755); err != nil {
		return nil, "", "", err
	}
	for src, dst := range map[string]string{cert: "cert.pem", key: "key.pem"} {
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, "", "", err
		}
		if err := os.WriteFile(filepath.Join(xwork, dst), b, 0o600); err != nil {
			return nil, "", "", err
		}
	}
	p, err := peers.StartXrootd(ctx, peers.XrootdConfig{DataDir: data, Port: rp, Name: name, WorkDir: xwork,
		Extra: []string{
			"xrd.tls " + filepath.Join(xwork, "cert.pem") + " " + filepath.Join(xwork, "key.pem"),
			"xrd.tlsca certdir " + caDir,
			"xrd.protocol XrdHttp:" + strconv.Itoa(hp) + " libXrdHttp.so",
			"http.exthandler xrdtpc libXrdHttpTPC.so",
			"ofs.tpc pgm /usr/bin/xrdcp --server",
			"xrootd.chksum adler32",
		}})
	if err != nil {
		return nil, "", "", fmt.Errorf("start xrootd: %w", err)
	}
	if err := waitPort(ctx, hp); err != nil {
		p.Stop()
		return nil, "", "", err
	}
	return p, "root://127.0.0.1:" + strconv.Itoa(rp), "https://127.0.0.1:" + strconv.Itoa(hp), nil
}

func xrdcpTPC(src, dst string) func(context.Context) error {
	return func(ctx context.Context) error {
		cmd := clientCmd(ctx, []string{"xrdcp", "-f", "-s", "--tpc", "only", src, dst}, nil)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, trimMsg(out))
		}
		return nil
	}
}

// httpTPC is an HTTP-TPC pull of src into dst, as FTS asks for one: with
// X-Number-Of-Streams when streams is set (gfal2 and davix always send
// it; 1 is their default).
func httpTPC(dst, src string, streams int) func(context.Context) error {
	args := []string{"-sS", "-k", "-X", "COPY", "-H", "Source: " + src, "-H", "Credential: none"}
	if streams > 0 {
		args = append(args, "-H", "X-Number-Of-Streams: "+strconv.Itoa(streams))
	}
	return curlCopy("COPY", append(args, dst))
}

// httpPush is an HTTP-TPC push of src to dst: COPY with Destination,
// sent to the source.
func httpPush(src, dst string) func(context.Context) error {
	return curlCopy("COPY (push)", []string{"-sS", "-k", "-X", "COPY", "-H", "Destination: " + dst, "-H", "Credential: none", src})
}

// curlCopy runs curl with args, a COPY whose answer must end in
// "success"; what names it in errors.
func curlCopy(what string, args []string) func(context.Context) error {
	return func(ctx context.Context) error {
		out, err := exec.CommandContext(ctx, "curl", args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "success") {
			return fmt.Errorf("%s: %v: %s", what, err, trimMsg(out))
		}
		return nil
	}
}

// httpPut uploads the local file to dst with one PUT, as a user's curl
// or gfal-copy does.
func httpPut(file, dst string) func(context.Context) error {
	args := []string{"-sS", "-k", "-f", "-T", file, dst}
	return func(ctx context.Context) error {
		if out, err := exec.CommandContext(ctx, "curl", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("PUT: %v: %s", err, trimMsg(out))
		}
		return nil
	}
}

// waitPort waits until something listens on the loopback port.
func waitPort(ctx context.Context, port int) error {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func linkOrCopy(src, dst string) error {
	os.Remove(dst)
	if os.Link(src, dst) == nil {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
