package doctor

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"sitebox/internal/config"
)

func TestAddresses(t *testing.T) {
	twoNICs := func() ([]Interface, error) {
		return []Interface{
			{Name: "lo", Up: true, Loopback: true, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}},
			{Name: "eth0", Up: true, Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.5")}},
			{Name: "eth1", Up: true, Addrs: []netip.Addr{netip.MustParseAddr("172.16.0.5")}},
		}, nil
	}
	for _, tc := range []struct {
		name      string
		rootURL   string
		directors []string
		hosts     map[string]string
		ifaces    func() ([]Interface, error)
		want      Status
		texts     []string
	}{
		{name: "on this machine", hosts: map[string]string{"t3-box": "10.0.0.5"}, ifaces: ifaces("10.0.0.5"),
			want: StatusOK, texts: []string{"t3-box resolves to 10.0.0.5, on eth0"}},
		{name: "not this machine (NAT)", rootURL: "root://192.0.2.10:1094", ifaces: ifaces("10.0.0.5"),
			want: StatusWarn, texts: []string{"192.0.2.10, which is on none of this machine's interfaces (eth0 10.0.0.5)",
				"Clients will be sent to 192.0.2.10, which is not this machine", "Behind NAT", "forward the root:// and https:// ports"}},
		{name: "name does not resolve", hosts: map[string]string{}, ifaces: ifaces("10.0.0.5"),
			want: StatusError, texts: []string{"t3-box does not resolve", "DNS record"}},
		{name: "loopback with directors", hosts: map[string]string{"t3-box": "127.0.1.1"}, ifaces: ifaces("10.0.0.5"),
			directors: []string{"https://region:8443"},
			want:      StatusWarn, texts: []string{"127.0.1.1 (loopback)", "1 director(s)", "/etc/hosts"}},
		{name: "loopback alone", hosts: map[string]string{"t3-box": "127.0.1.1"}, ifaces: ifaces("10.0.0.5"),
			want: StatusOK, texts: []string{"only clients on this machine"}},
		{name: "two NICs, advertised off the default route", hosts: map[string]string{"t3-box": "172.16.0.5"}, ifaces: twoNICs,
			want: StatusWarn, texts: []string{"t3-box resolves to 172.16.0.5 on eth1, but the default route leaves by eth0", "asymmetric", "ip rule add from 172.16.0.5"}},
		{name: "two NICs, advertised on the default route", hosts: map[string]string{"t3-box": "10.0.0.5"}, ifaces: twoNICs,
			want: StatusOK, texts: []string{"10.0.0.5, on eth0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(t, ":1094", config.Off)
			cfg.Advertise.RootURL = tc.rootURL
			cfg.Advertise.To = tc.directors
			o := Options{Hostname: "t3-box", LookupIP: resolver(tc.hosts), Interfaces: tc.ifaces,
				DefaultRoutes: func() ([]string, error) { return []string{"eth0"}, nil }}.withDefaults()
			cs := checkAddresses(context.Background(), cfg, o)
			if len(cs) != 1 {
				t.Fatalf("want 1 check, got %+v", cs)
			}
			mustHave(t, cs[0], tc.want, tc.texts...)
		})
	}
}

func TestParseRoutes(t *testing.T) {
	v4 := `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
eth0	00000000	010200C0	0003	0	0	0	00000000	0	0	0
eth0	000200C0	00000000	0001	0	0	0	00FFFFFF	0	0	0
eth1	00000000	0110AC10	0001	0	0	100	00000000	0	0	0
`
	if got := parseRoutes4(strings.NewReader(v4)); !slices.Equal(got, []string{"eth0", "eth1"}) {
		t.Errorf("parseRoutes4 = %v", got)
	}
	v6 := `fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
`
	if got := parseRoutes6(strings.NewReader(v6)); !slices.Equal(got, []string{"eth0"}) {
		t.Errorf("parseRoutes6 = %v", got)
	}
}
