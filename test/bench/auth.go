package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"sitebox/test/peers"
)

// AuthConfig describes the wire-protection benchmark: one file read over
// root:// and https:// from namespaces of each protection level (none,
// integrity, privacy), every path in one run, side by side. Zero fields
// take the documented defaults.
type AuthConfig struct {
	Sitebox  string    // sitebox binary serving both boxes
	WorkDir  string    // scratch: the pool, box configs and state, the client CA dir
	FileSize int64     // bytes per copy (default 1 GiB)
	Rounds   int       // rounds over every path; the median is reported (default 3)
	Out      io.Writer // progress lines (default: discarded)
}

func (c *AuthConfig) applyDefaults() {
	if c.FileSize <= 0 {
		c.FileSize = 1 << 30
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

func (c *AuthConfig) validate() error {
	if err := needBinAndDir("bench auth", c.Sitebox, c.WorkDir); err != nil {
		return err
	}
	// roots:// needs `openssl rehash` to make the CA directory xrdcp reads.
	for _, tool := range []string{"xrdcp", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("bench auth needs %s: %w", tool, err)
		}
	}
	return nil
}

// AuthReport is the whole run.
type AuthReport struct {
	Config AuthConfig
	CPUs   int
	Rows   []AuthRow   // table order: root:// then https://, none → privacy, variants last
	Checks []AuthCheck // refusals tried once before the rounds
	// PeakRSS of each box over the run: "box" serves root:// and
	// https://, "plain" serves http://.
	PeakRSS map[string]int64
	// Connect are the connection-time authentication rows (auth_krb5.go);
	// ConnectNote says why there are none.
	Connect     []AuthConnRow
	ConnectNote string
	// GSI are the gsi login rows, the box's and xrootd's (auth_gsi.go);
	// GSINote says why there are none.
	GSI []AuthConnRow
	// GSIRates are copies' data rates after a gsi login, and after an
	// anonymous one on the same box.
	GSIRates []AuthGSIRate
	GSINote  string
}

// AuthRow is one client path at one protection level.
type AuthRow struct {
	Proto   string // "root" or "https" (plain http:// counts as https at level none)
	Level   string // none, integrity or privacy
	How     string // the client and the wire path it takes
	Variant bool   // beside the six main rows: another client path at the same level
	// Server is "sitebox" or "xrootd" (the peer, for reference rows).
	Server string
	Runs   []float64
	MBps   float64 // median of Runs
	// ServerCPU and ClientCPU are CPU seconds per GB moved (medians): on
	// a machine whose cores clients and servers share, a level's cost is
	// the CPU it adds at both ends.
	ServerCPU, ClientCPU float64
}

// AuthCheck is one read that the box's policy must refuse.
type AuthCheck struct {
	What    string
	Refused bool
	// Proof marks the refusals that show a measured row took the
	// protected path: without them a "privacy" figure could be plain.
	Proof  bool
	Detail string // what the client printed, trimmed
}

// Cost is 1 − row ÷ the same server's and protocol's unprotected row: the
// share of throughput the level costs (sitebox rows against sitebox's
// main row, the xrootd peer's against its own). ok is false when there is
// no baseline.
func (r *AuthReport) Cost(row AuthRow) (cost float64, ok bool) {
	for _, b := range r.Rows {
		if b.Proto == row.Proto && b.Server == row.Server && b.Level == "none" && b.MBps > 0 && (!b.Variant || row.Server == "xrootd") {
			return 1 - row.MBps/b.MBps, true
		}
	}
	return 0, false
}

// authLevels are the namespaces, one per protection level, each holding
// the same file as /bench/<level>/f.
var authLevels = []string{"none", "integrity", "privacy"}

// authPath is how one row reads its file.
type authPath struct {
	row    AuthRow
	server *peers.Process // charged with the server CPU
	argv   []string
	env    []string
	// verify checks a successful command's stdout (curl's -w line).
	verify func(stdout string) error
}

// Auth runs the benchmark. One box serves root:// (and roots:// with its
// self-signed certificate) and https://; a second box with the same
// policy over the same pool serves plain http://, the unprotected HTTP
// baseline. The file is read through every path once (page cache warm,
// paths proven to work), the refusals are checked, then cfg.Rounds rounds
// read it through every path, the first path rotating per round so slow
// drift of the shared machine spreads over all rows.
func Auth(ctx context.Context, cfg AuthConfig) (*AuthReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pool := filepath.Join(cfg.WorkDir, "pool")
	if err := makeAuthFiles(pool, cfg.FileSize); err != nil {
		return nil, fmt.Errorf("bench auth: test file: %w", err)
	}
	fmt.Fprintf(cfg.Out, "bench auth: %d MiB file, %d rounds\n", cfg.FileSize>>20, cfg.Rounds)
	bx, err := startAuthBoxes(ctx, cfg.Sitebox, cfg.WorkDir, pool)
	if bx != nil {
		defer bx.stop()
	}
	if err != nil {
		return nil, err
	}
	rep := &AuthReport{Config: cfg, CPUs: runtime.NumCPU(), PeakRSS: map[string]int64{}}
	paths := bx.paths(cfg.FileSize)
	for _, p := range paths {
		if _, err := runAuthPath(ctx, p); err != nil {
			return nil, fmt.Errorf("bench auth: %s %s: warm-up read failed: %w", p.row.Proto, p.row.How, err)
		}
	}
	for _, r := range bx.refusals() {
		c := runRefusal(ctx, r)
		rep.Checks = append(rep.Checks, c)
		fmt.Fprintf(cfg.Out, "  check %s: refused=%t %s\n", c.What, c.Refused, c.Detail)
	}
	runs := make([][]float64, len(paths))
	srvCPU, cliCPU := make([][]float64, len(paths)), make([][]float64, len(paths))
	gb := float64(cfg.FileSize) / 1e9
	for r := range cfg.Rounds {
		for i := range paths {
			k := (i + r) % len(paths)
			p := paths[k]
			m, err := runAuthPath(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("bench auth: %s %s, round %d: %w", p.row.Proto, p.row.How, r+1, err)
			}
			mbps := float64(cfg.FileSize) / m.secs / 1e6
			runs[k] = append(runs[k], mbps)
			srvCPU[k] = append(srvCPU[k], m.server.Seconds()/gb)
			cliCPU[k] = append(cliCPU[k], m.client.Seconds()/gb)
			fmt.Fprintf(cfg.Out, "  %-7s %-5s %-9s %-52s round %d: %6.0f MB/s  cpu/GB server %.2fs client %.2fs\n",
				p.row.Server, p.row.Proto, p.row.Level, p.row.How, r+1, mbps, m.server.Seconds()/gb, m.client.Seconds()/gb)
		}
	}
	for i, p := range paths {
		row := p.row
		row.Runs, row.MBps = runs[i], median(runs[i])
		row.ServerCPU, row.ClientCPU = median(srvCPU[i]), median(cliCPU[i])
		rep.Rows = append(rep.Rows, row)
	}
	if rep.Connect, rep.ConnectNote, err = authConnect(ctx, cfg, pool); err != nil {
		return nil, err
	}
	if rep.GSI, rep.GSIRates, rep.GSINote, err = authConnectGSI(ctx, cfg, pool); err != nil {
		return nil, err
	}
	for name, proc := range map[string]*peers.Process{"box": bx.main, "plain": bx.plain} {
		if n, err := proc.PeakRSS(); err == nil {
			rep.PeakRSS[name] = n
		}
	}
	return rep, nil
}

// copyMeasure is one copy: wall time, and the CPU the server and the
// client spent on it.
type copyMeasure struct {
	secs           float64
	server, client time.Duration
}

// runAuthPath runs one copy and measures it.
func runAuthPath(ctx context.Context, p authPath) (copyMeasure, error) {
	cmd := clientCmd(ctx, p.argv, p.env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var m copyMeasure
	srv0, serr := p.server.CPUTime()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return m, fmt.Errorf("%s: %w: %s", p.argv[0], err, trimMsg(stderr.Bytes()))
	}
	m.secs = time.Since(start).Seconds()
	if srv1, err := p.server.CPUTime(); err == nil && serr == nil {
		m.server = srv1 - srv0
	}
	m.client = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if p.verify != nil {
		if err := p.verify(stdout.String()); err != nil {
			return m, fmt.Errorf("%s: %w", p.argv[0], err)
		}
	}
	return m, nil
}

// authBoxes are the two sitebox processes and how clients reach them.
type authBoxes struct {
	main, plain *peers.Process
	// xrd is a real xrootd with TLS over the same pool, for the peer's
	// own TLS cost beside ours; nil when xrootd is not installed.
	xrd       *peers.Process
	xrdPort   int
	rootPort  int
	httpsPort int
	httpPort  int
	cert      string // the box's self-signed certificate (curl --cacert)
	caDir     string // X509_CERT_DIR for xrdcp: cert.pem plus its hash link
}

func (b *authBoxes) stop() {
	for _, p := range []*peers.Process{b.xrd, b.plain, b.main} {
		if p != nil {
			p.Stop()
		}
	}
}

func (b *authBoxes) rootURL(scheme, level string) string {
	return fmt.Sprintf("%s://127.0.0.1:%d//bench/%s/f", scheme, b.rootPort, level)
}

func (b *authBoxes) httpURL(level string) string {
	if level == "none" {
		return fmt.Sprintf("http://127.0.0.1:%d/bench/none/f", b.httpPort)
	}
	return fmt.Sprintf("https://127.0.0.1:%d/bench/%s/f", b.httpsPort, level)
}

// paths lists the measured rows; every xrdcp row sets XRD_CPUSEPGWRTRD.
func (b *authBoxes) paths(size int64) []authPath {
	// -q ignores ~/.curlrc; a stalled transfer fails instead of hanging.
	curl := func(url, version string) []string {
		return []string{"curl", "-q", "-sS", "-f", "--speed-limit", "1000000", "--speed-time", "30",
			"--cacert", b.cert, "--http" + version, "-o", "/dev/null", "-w", "%{http_version} %{size_download}", url}
	}
	// The HTTP version curl reports proves which framing was measured.
	want := func(version string) func(string) error {
		return func(out string) error {
			if w := version + " " + strconv.FormatInt(size, 10); strings.TrimSpace(out) != w {
				return fmt.Errorf("curl reported %q (HTTP version, bytes), want %q", out, w)
			}
			return nil
		}
	}
	plain, pg, tls := "XRD_CPUSEPGWRTRD=0", "XRD_CPUSEPGWRTRD=1", "X509_CERT_DIR="+b.caDir
	ps := []authPath{
		{row: AuthRow{Proto: "root", Level: "none", How: "xrdcp root://, kXR_read (sendfile)"},
			argv: xrdcpArgs(b.rootURL("root", "none")), env: []string{plain}},
		{row: AuthRow{Proto: "root", Level: "integrity", How: "xrdcp root://, kXR_pgread (CRC32C per 4 KiB page)"},
			argv: xrdcpArgs(b.rootURL("root", "integrity")), env: []string{pg}},
		{row: AuthRow{Proto: "root", Level: "privacy", How: "xrdcp roots://, TLS + kXR_pgread (xrdcp default)"},
			argv: xrdcpArgs(b.rootURL("roots", "privacy")), env: []string{pg, tls}},
		{row: AuthRow{Proto: "https", Level: "none", How: "curl http:// (plain box), HTTP/1.1"},
			argv: curl(b.httpURL("none"), "1.1"), verify: want("1.1")},
		{row: AuthRow{Proto: "https", Level: "integrity", How: "curl https://, TLS, HTTP/1.1"},
			argv: curl(b.httpURL("integrity"), "1.1"), verify: want("1.1")},
		{row: AuthRow{Proto: "https", Level: "privacy", How: "curl https://, TLS, HTTP/1.1"},
			argv: curl(b.httpURL("privacy"), "1.1"), verify: want("1.1")},
		// Variants split a level's cost: TLS alone on root://, and the
		// HTTP/2 framing curl negotiates by default on top of TLS.
		{row: AuthRow{Proto: "root", Level: "privacy", How: "xrdcp roots://, TLS + kXR_read (XRD_CPUSEPGWRTRD=0)", Variant: true},
			argv: xrdcpArgs(b.rootURL("roots", "privacy")), env: []string{plain, tls}},
		{row: AuthRow{Proto: "https", Level: "privacy", How: "curl https://, TLS, HTTP/2 ([https] http2 = true)", Variant: true},
			argv: curl(b.httpURL("privacy"), "2"), verify: want("2")},
	}
	for i := range ps {
		ps[i].row.Server, ps[i].server = "sitebox", b.main
		if strings.HasPrefix(ps[i].argv[len(ps[i].argv)-1], "http://") {
			ps[i].server = b.plain
		}
	}
	if b.xrd != nil {
		xrd := func(scheme string) string { return fmt.Sprintf("%s://127.0.0.1:%d//none/f", scheme, b.xrdPort) }
		ps = append(ps,
			authPath{row: AuthRow{Server: "xrootd", Proto: "root", Level: "none", How: "XRootD 5.5: xrdcp root://, kXR_read", Variant: true},
				server: b.xrd, argv: xrdcpArgs(xrd("root")), env: []string{plain}},
			authPath{row: AuthRow{Server: "xrootd", Proto: "root", Level: "privacy", How: "XRootD 5.5: xrdcp roots://, TLS + kXR_read", Variant: true},
				server: b.xrd, argv: xrdcpArgs(xrd("roots")), env: []string{plain, tls}},
		)
	}
	return ps
}
