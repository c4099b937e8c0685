package doctor

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/tlsutil"
)

// Options tune the checks and replace their effects on the world. The
// zero value checks the real machine with the documented defaults; tests
// set the function fields to stage a closed port, a full disk or a slow
// one without needing that machine.
type Options struct {
	// ConfigName names the config file in the report ("" for defaults);
	// ConfigProblems are what the loader found wrong in it.
	ConfigName     string
	ConfigProblems []config.Problem

	// NetworkSpeed is the box's network in bytes/s, which the cache disk
	// must keep up with (default 1250e6: 10 Gbit/s).
	NetworkSpeed float64
	// Timeout bounds each network probe and command (default 5s).
	Timeout time.Duration
	// DiskFiles, DiskFileSize and DiskTime shape the cache disk test:
	// that many files written in parallel, each up to DiskFileSize
	// (defaults 4 and 64 MiB), for at most DiskTime (default 3s).
	DiskFiles    int
	DiskFileSize int64
	DiskTime     time.Duration
	// Hostname is what clients are given for a wildcard listener when no
	// [advertise] URL is set (default os.Hostname, as the box does).
	Hostname string

	// Dial connects to host:port (default: net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// LookupIP resolves a name (default: net.DefaultResolver).
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Interfaces lists this machine's network interfaces (default:
	// net.Interfaces).
	Interfaces func() ([]Interface, error)
	// DefaultRoutes names the interfaces that carry a default route
	// (default: /proc/net/route and /proc/net/ipv6_route).
	DefaultRoutes func() ([]string, error)
	// Statfs reports a filesystem's size and free space (default: statfs(2)).
	Statfs func(path string) (FSInfo, error)
	// HTTPClient makes a client trusting caFile besides the system roots
	// (default: tlsutil.ClientConfig with the timeout).
	HTTPClient func(caFile string, insecure bool, timeout time.Duration) (*http.Client, error)
	// Now is the clock compared with peers' (default time.Now).
	Now func() time.Time
	// RunCommand runs a program with extra environment and returns its
	// combined output (default: os/exec).
	RunCommand func(ctx context.Context, env []string, name string, args ...string) ([]byte, error)
	// OpenWriter creates a file for the cache disk test (default: O_DIRECT
	// where the filesystem allows it, else buffered; Close syncs). The
	// check removes path afterwards.
	OpenWriter func(path string) (io.WriteCloser, error)
	// WriteProbe creates and removes a file in dir (default: a temporary
	// file there), to tell a writable directory from a read-only one.
	WriteProbe func(dir string) error
}

// Interface is one network interface and the addresses on it.
type Interface struct {
	Name     string
	Up       bool
	Loopback bool
	Addrs    []netip.Addr
}

// FSInfo is the space and inodes of one filesystem; Files is 0 where the
// filesystem has no fixed inode table (btrfs, ZFS report it that way).
type FSInfo struct {
	Total, Avail     uint64 // bytes; Avail is what an unprivileged writer may use
	Files, FilesFree uint64
}

// withDefaults returns a copy with every unset field filled in.
func (o Options) withDefaults() *Options {
	if o.NetworkSpeed <= 0 {
		o.NetworkSpeed = 10e9 / 8
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.DiskFiles <= 0 {
		o.DiskFiles = 4
	}
	if o.DiskFileSize <= 0 {
		o.DiskFileSize = 64 << 20
	}
	if o.DiskTime <= 0 {
		o.DiskTime = 3 * time.Second
	}
	if o.Hostname == "" {
		o.Hostname, _ = os.Hostname()
	}
	if o.Dial == nil {
		d := &net.Dialer{}
		o.Dial = d.DialContext
	}
	if o.LookupIP == nil {
		o.LookupIP = lookupIP
	}
	if o.Interfaces == nil {
		o.Interfaces = systemInterfaces
	}
	if o.DefaultRoutes == nil {
		o.DefaultRoutes = defaultRoutes
	}
	if o.Statfs == nil {
		o.Statfs = statfs
	}
	if o.HTTPClient == nil {
		o.HTTPClient = httpClient
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RunCommand == nil {
		o.RunCommand = runCommand
	}
	if o.OpenWriter == nil {
		o.OpenWriter = openDirect
	}
	if o.WriteProbe == nil {
		o.WriteProbe = writeProbe
	}
	return &o
}

// resolve looks host up within the probe timeout, as every wait is
// bounded.
func (o Options) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	return o.LookupIP(ctx, host)
}

func lookupIP(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func systemInterfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []Interface
	for _, ifc := range ifs {
		it := Interface{Name: ifc.Name, Up: ifc.Flags&net.FlagUp != 0, Loopback: ifc.Flags&net.FlagLoopback != 0}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				it.Addrs = append(it.Addrs, p.Addr().Unmap())
			}
		}
		out = append(out, it)
	}
	return out, nil
}

func httpClient(caFile string, insecure bool, timeout time.Duration) (*http.Client, error) {
	tc, err := tlsutil.ClientConfig(caFile, insecure)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

func runCommand(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}
