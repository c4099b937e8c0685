package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// fedNode is one sitebox of a federation topology, started from a config
// file. conf is the TOML after the [server], [root] and [https] tables,
// which fedNode writes itself.
type fedNode struct {
	*box
	name, site string
}

func startFedNode(t *testing.T, name, site, conf string) *fedNode {
	t.Helper()
	return prepareNode(t, 0).start(t, name, site, conf)
}

// startFedNodeAt is startFedNode with the root:// port chosen by the
// caller, for topologies whose configs name each other.
func startFedNodeAt(t *testing.T, name, site, conf string, rp int) *fedNode {
	t.Helper()
	return prepareNode(t, rp).start(t, name, site, conf)
}

// nodeSpec is a node's state dir and ports before it starts, so a test can
// prepare its state (a token issuer key) and name its ports in the config.
type nodeSpec struct {
	state  string
	rp, hp int
	// server holds more lines of the [server] table (access_log = …),
	// https more of the [https] table (cert = …).
	server, https string
}

// prepareNode picks the ports (rp 0: a free one) and a state dir.
func prepareNode(t *testing.T, rp int) nodeSpec {
	t.Helper()
	if rp == 0 {
		rp, _ = peers.FreePort()
	}
	hp, _ := peers.FreePort()
	return nodeSpec{state: t.TempDir(), rp: rp, hp: hp}
}

func (n nodeSpec) httpsURL() string { return "https://127.0.0.1:" + strconv.Itoa(n.hp) }

func (n nodeSpec) start(t *testing.T, name, site, conf string) *fedNode {
	t.Helper()
	node, err := n.tryStart(t, name, site, conf)
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// tryStart is start for a test that expects the box may refuse to start:
// its error holds the box's log.
func (n nodeSpec) tryStart(t *testing.T, name, site, conf string) (*fedNode, error) {
	t.Helper()
	state, rp, hp := n.state, n.rp, n.hp
	var cfg strings.Builder
	cfg.WriteString("[server]\nname = " + strconv.Quote(name) + "\nsite = " + strconv.Quote(site) +
		"\nstate_dir = " + strconv.Quote(state) + "\nlog_level = \"debug\"\n" + n.server)
	cfg.WriteString("[root]\naddr = \"127.0.0.1:" + strconv.Itoa(rp) + "\"\n")
	cfg.WriteString("[https]\naddr = \"127.0.0.1:" + strconv.Itoa(hp) + "\"\n" + n.https)
	cfg.WriteString(conf)
	file := filepath.Join(state, "sitebox.toml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	approveAdvertising(t, file, conf)
	p, err := peers.StartSitebox(context.Background(), siteboxBin, []int{rp, hp}, "serve", "--config", file)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w\n%s", name, err, cfg.String())
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, tail(p.Log.String(), 5000))
		}
	})
	return &fedNode{box: &box{
		rootHost: "127.0.0.1:" + strconv.Itoa(rp),
		rootURL:  "root://127.0.0.1:" + strconv.Itoa(rp),
		httpsURL: "https://127.0.0.1:" + strconv.Itoa(hp),
		certFile: filepath.Join(state, "tls", "cert.pem"),
		state:    state,
		proc:     p,
	}, name: name, site: site}, nil
}

// advertiseTo is the [advertise] table for a node reporting to dir every
// interval. Directors take ads only from approved members, so it also
// names (in a comment line start reads) the director whose operator
// approves the node before it starts.
func advertiseTo(dir *fedNode, interval string) string {
	return "[advertise]\nto = [" + strconv.Quote(dir.httpsURL) + "]\ninterval = " + strconv.Quote(interval) +
		"\nca = " + strconv.Quote(dir.certFile) + "\n" + approveMark + dir.httpsURL + " " + filepath.Join(dir.state, "sitebox.toml") + "\n"
}

// approveMark starts the comment line of advertiseTo: director URL and
// config file.
const approveMark = "# test: approved by "

// approveAdvertising does what the two operators do for each director
// conf names with advertiseTo: `sitebox federation join` with the node's
// config, then `sitebox federation approve` with the director's. A node
// that is a director asks for every prefix (its servers are the tests').
func approveAdvertising(t *testing.T, file, conf string) {
	t.Helper()
	for _, line := range strings.Split(conf, "\n") {
		rest, ok := strings.CutPrefix(line, approveMark)
		if !ok {
			continue
		}
		dirURL, dirConf, _ := strings.Cut(rest, " ")
		args := []string{"federation", "join", dirURL, "--config", file}
		if strings.Contains(conf, "[director]\nenabled = true") {
			args = append(args, "--prefix", "/")
		}
		out := approveJoin(t, args, dirConf)
		// A CA director issued the box's certificate: install it, as the
		// box's operator does with the file approve wrote.
		if _, path, ok := strings.Cut(out, "signed by the federation CA: "); ok {
			path, _, _ = strings.Cut(path, "\n")
			run(t, false, siteboxBin, "federation", "install-cert", strings.TrimSpace(path), "--config", file)
		}
	}
}

// approveJoin runs join with args and approves its request at the
// director with config dirConf (extra: approve's flags), without asking
// (--yes) and for a test federation on this machine (--allow-loopback).
func approveJoin(t *testing.T, joinArgs []string, dirConf string, extra ...string) string {
	t.Helper()
	cmd := exec.Command(siteboxBin, joinArgs...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	fields := strings.Fields(string(out))
	if err != nil || len(fields) != 4 {
		t.Fatalf("sitebox %s: %v\n%s%s", strings.Join(joinArgs, " "), err, out, stderr.String())
	}
	ok, _ := run(t, false, siteboxBin, append([]string{"federation", "approve", fields[3], "--config", dirConf, "--yes", "--allow-loopback"}, extra...)...)
	return ok
}

// certBundle concatenates the nodes' self-signed certificates, for clients
// that follow redirects across them (curl, uproot).
func certBundle(t *testing.T, nodes ...*fedNode) string {
	t.Helper()
	var all []byte
	for _, n := range nodes {
		b, err := os.ReadFile(n.certFile)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	p := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(p, all, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// curlCA GETs url trusting caFile and returns the status and the body.
func curlCA(t *testing.T, caFile, url string) (code, body string) {
	t.Helper()
	out, _ := run(t, true, "curl", "-sS", "--max-time", "30", "--cacert", caFile, "-w", "\n%{http_code}", url)
	out = strings.TrimRight(out, "\n")
	i := strings.LastIndex(out, "\n")
	if i < 0 {
		return out, ""
	}
	return out[i+1:], out[:i]
}
