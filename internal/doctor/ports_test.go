package doctor

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"

	"sitebox/internal/config"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

func TestPortClosed(t *testing.T) {
	addr := closedPort(t)
	cfg := baseConfig(t, addr, config.Off)
	cs := checkPorts(context.Background(), cfg, Options{}.withDefaults())
	if len(cs) != 1 {
		t.Fatalf("want 1 check, got %+v", cs)
	}
	mustHave(t, cs[0], StatusError, "nothing listens on "+addr, "connection refused", "ss -ltnp")
}

func TestPortListening(t *testing.T) {
	root, https := listen(t), listen(t)
	cfg := baseConfig(t, root, https)
	cs := checkPorts(context.Background(), cfg, Options{}.withDefaults())
	if len(cs) != 2 {
		t.Fatalf("want 2 checks, got %+v", cs)
	}
	mustHave(t, cs[0], StatusOK, "listening on "+root)
	mustHave(t, cs[1], StatusOK, "listening on "+https)
}

// TestPortBoundToLoopback is real: the box listens on 127.0.0.1 only,
// while clients are sent to 127.0.0.2 (another loopback address on
// Linux), where nothing answers.
func TestPortBoundToLoopback(t *testing.T) {
	root := listen(t)
	_, port, _ := net.SplitHostPort(root)
	cfg := baseConfig(t, root, config.Off)
	cfg.Advertise.RootURL = "root://127.0.0.2:" + port
	cs := checkPorts(context.Background(), cfg, Options{}.withDefaults())
	mustHave(t, cs[0], StatusError, "listens only on 127.0.0.1", "127.0.0.2", `"0.0.0.0:`+port+`"`)
}

// fakeDial connects to anything but the addresses in fail, which fail
// with the given error.
func fakeDial(fail map[string]error) func(context.Context, string, string) (net.Conn, error) {
	return func(_ context.Context, _, addr string) (net.Conn, error) {
		if err, ok := fail[addr]; ok {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
		}
		a, b := net.Pipe()
		b.Close()
		return a, nil
	}
}

func TestPortAdvertisedFails(t *testing.T) {
	refused := &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name   string
		err    error
		ifaces []string
		want   Status
		texts  []string
	}{
		{"refused", refused, []string{"10.0.0.5"}, StatusError, []string{"refuses connections", "firewall-cmd", "ufw allow 1094/tcp"}},
		{"filtered", os.ErrDeadlineExceeded, []string{"10.0.0.5"}, StatusError, []string{"filtered", "silently drops", "inbound tcp/1094"}},
		// Not this machine's address: a failure from inside may be the
		// router not looping back, so only a warning.
		{"nat", refused, []string{"192.168.1.5"}, StatusWarn, []string{"not an address of this machine (NAT?)", "nc -vz 10.0.0.5 1094"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(t, ":1094", config.Off)
			o := Options{
				Hostname:   "t3-box",
				LookupIP:   resolver(map[string]string{"t3-box": "10.0.0.5"}),
				Dial:       fakeDial(map[string]error{"10.0.0.5:1094": tc.err}),
				Interfaces: ifaces(tc.ifaces...),
			}.withDefaults()
			cs := checkPorts(context.Background(), cfg, o)
			mustHave(t, cs[0], tc.want, append(tc.texts, "listening on 127.0.0.1:1094", "t3-box:1094")...)
		})
	}
}

func TestPortAdvertisedReachable(t *testing.T) {
	cfg := baseConfig(t, "0.0.0.0:1094", config.Off)
	o := Options{Hostname: "t3-box", LookupIP: resolver(map[string]string{"t3-box": "10.0.0.5"}), Dial: fakeDial(nil), Interfaces: ifaces("10.0.0.5")}.withDefaults()
	cs := checkPorts(context.Background(), cfg, o)
	mustHave(t, cs[0], StatusOK, "reachable at t3-box:1094 (10.0.0.5)")
}

func TestListenersPublicAddress(t *testing.T) {
	for _, tc := range []struct {
		name             string
		root, rootURL    string
		local, pub, from string
	}{
		{"wildcard", ":1094", "", "127.0.0.1:1094", "box:1094", "the hostname (no [advertise] root_url)"},
		{"specific", "10.0.0.5:1094", "", "10.0.0.5:1094", "10.0.0.5:1094", "[root] addr"},
		{"advertised", "[::]:1094", "root://t3.example.org:11094", "127.0.0.1:1094", "t3.example.org:11094", "[advertise] root_url"},
		{"advertised without port", ":1094", "root://t3.example.org", "127.0.0.1:1094", "t3.example.org:1094", "[advertise] root_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Root: xrdserver.Settings{Addr: tc.root}, HTTPS: webdav.Settings{Addr: config.Off}, Server: config.Server{MetricsAddr: config.Off}}
			cfg.Advertise.RootURL = tc.rootURL
			ls := listeners(cfg, "box")
			if len(ls) != 1 || ls[0].Local != tc.local || ls[0].Public != tc.pub || ls[0].PublicFrom != tc.from {
				t.Errorf("got %+v; want local %s public %s from %s", ls, tc.local, tc.pub, tc.from)
			}
		})
	}
}

// A director beside the box's data roles has listeners of its own, which
// doctor checks as it does the box's.
func TestListenersOfADirectorBesideData(t *testing.T) {
	cfg := &config.Config{Root: xrdserver.Settings{Addr: ":1094"}, HTTPS: webdav.Settings{Addr: config.Off}, Server: config.Server{MetricsAddr: config.Off}}
	cfg.Director.Enabled, cfg.Director.RootAddr, cfg.Director.HTTPSAddr = true, ":1095", "10.0.0.5:8444"
	cfg.Director.RootURL = "root://t3.example.org:1095"
	ls := listeners(cfg, "box")
	if len(ls) != 3 {
		t.Fatalf("got %+v; want the data root:// and the director's two", ls)
	}
	if l := ls[1]; l.Role != "root://" || l.Key != "[director] root_addr" || l.Public != "t3.example.org:1095" || l.PublicFrom != "[director] root_url" {
		t.Errorf("director root:// %+v", l)
	}
	if l := ls[2]; l.Role != "https://" || l.Local != "10.0.0.5:8444" || l.Key != "[director] https_addr" {
		t.Errorf("director https:// %+v", l)
	}
}
