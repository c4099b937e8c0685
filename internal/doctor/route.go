package doctor

import (
	"bufio"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// defaultRoutes names the interfaces holding a default route, read from
// the kernel's tables (Linux); elsewhere it fails and the two-NIC check
// is left out.
func defaultRoutes() ([]string, error) {
	var names []string
	var errs []error
	for _, t := range []struct {
		file  string
		parse func(io.Reader) []string
	}{{"/proc/net/route", parseRoutes4}, {"/proc/net/ipv6_route", parseRoutes6}} {
		f, err := os.Open(t.file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		names = append(names, t.parse(f)...)
		f.Close()
	}
	if len(errs) == 2 {
		return nil, errors.Join(errs...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Route flags from the kernel's route.h.
const (
	rtfUp     = 0x1
	rtfReject = 0x200
)

// parseRoutes4 reads /proc/net/route: a header, then "Iface Destination
// Gateway Flags RefCnt Use Metric Mask ..." in hex; the default route has
// destination and mask 0.
func parseRoutes4(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		if first || len(f) < 8 {
			continue
		}
		flags, _ := strconv.ParseUint(f[3], 16, 32)
		if f[1] == "00000000" && f[7] == "00000000" && flags&rtfUp != 0 && flags&rtfReject == 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// parseRoutes6 reads /proc/net/ipv6_route: "dest plen src splen nexthop
// metric refcnt use flags iface", no header. The kernel lists reject
// routes through lo as defaults too; those are left out.
func parseRoutes6(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		flags, _ := strconv.ParseUint(f[8], 16, 32)
		if strings.Trim(f[0], "0") == "" && f[1] == "00" && flags&rtfUp != 0 && flags&rtfReject == 0 && f[9] != "lo" {
			out = append(out, f[9])
		}
	}
	return out
}
