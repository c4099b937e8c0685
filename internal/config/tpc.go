package config

import (
	"fmt"

	"sitebox/internal/hostlist"
	"sitebox/internal/problem"
	"sitebox/internal/tpc"
	"sitebox/internal/tpc/tpcallow"
	"sitebox/internal/units"
)

// TPC holds the settings of third-party copies (HTTP-TPC COPY and
// root:// TPC), whichever frontend receives them.
type TPC struct {
	// Allow lists the servers a user may make the box pull from or push
	// to: "*" (any host name), "*.example.org", "host.example.org", and
	// addresses or CIDR ranges ("192.0.2.0/24"). Names reach only public
	// addresses; a loopback, private or link-local address must be listed
	// as an address or range. Checked when connecting, after DNS. Default
	// ["*"]: any public server; [] refuses every copy.
	Allow []string `toml:"allow"`
	// BufferMemory bounds the memory all copies of the box (HTTP-TPC pull
	// and push, root:// TPC, WebDAV COPY within the box) hold in buffers
	// at once ("512MiB"; at least 4MiB, one chunk). Default: a sixteenth
	// of the machine's memory (or of the service's cgroup limit), between
	// 64MiB and 1GiB.
	BufferMemory BufferMemory `toml:"buffer_memory" nonzero:""`
	// ProxyFile is an X.509 proxy the box presents when a copy pulls
	// from (or pushes to) a server that asks for one (gsi on root://, a
	// client certificate on https://) — but only to the servers
	// ProxyHosts lists ("host:port", "host", "*.example.org"): the other
	// end of a copy is chosen by the user, and the box must not lend its
	// own identity to whatever server a user names. To other servers
	// copies go with the user's token, or with nothing.
	ProxyFile  string   `toml:"proxy_file"`
	ProxyHosts []string `toml:"proxy_hosts"`
}

// BufferMemory is [tpc] buffer_memory: a size, whose problems name the
// least it may be.
type BufferMemory units.Size

// UnmarshalText reads a size as units.Size does.
func (b *BufferMemory) UnmarshalText(text []byte) error {
	var n units.Size
	if err := n.UnmarshalText(text); err != nil {
		return fmt.Errorf("%q is not a size of at least %s (one copy chunk)", text, units.FormatSize(tpc.MinBudget))
	}
	*b = BufferMemory(n)
	return nil
}

// MarshalText writes the size as units.Size does.
func (b BufferMemory) MarshalText() ([]byte, error) { return units.Size(b).MarshalText() }

func (b BufferMemory) String() string { return units.Size(b).String() }

func (t *TPC) applyDefaults() {
	if t.Allow == nil {
		t.Allow = []string{"*"}
	}
}

// Policy is Allow parsed; Validate has reported a bad entry, so an error
// here leaves a policy that refuses everything.
func (t *TPC) Policy() *tpcallow.Policy {
	p, err := tpcallow.Parse(t.Allow)
	if err != nil {
		return &tpcallow.Policy{}
	}
	return p
}

// BufferBytes is BufferMemory in bytes, or the default for a machine
// with total bytes of memory (0: unknown) when it is not set.
func (t *TPC) BufferBytes(total int64) int64 {
	if t.BufferMemory > 0 {
		return int64(t.BufferMemory)
	}
	return tpc.BufferMemoryFor(total)
}

// ProxyHostList is ProxyHosts parsed (nil when there are none);
// Validate has reported a bad entry.
func (t *TPC) ProxyHostList() *hostlist.List {
	if len(t.ProxyHosts) == 0 {
		return nil
	}
	l, err := hostlist.New(nil, t.ProxyHosts, "[tpc] proxy_hosts")
	if err != nil {
		return nil
	}
	return l
}

// Validate returns every problem in t, keyed as in the file
// ("tpc.allow").
func (t *TPC) Validate() []Problem {
	l := &problem.List{}
	add := l.Add
	for _, p := range t.ProxyHosts {
		if err := hostlist.CheckPattern(p); err != nil {
			add("tpc.proxy_hosts", "%v", err)
		}
	}
	switch {
	case t.ProxyFile != "" && len(t.ProxyHosts) == 0:
		add("tpc.proxy_file", "set, but proxy_hosts is empty: list the servers copies may present the box's proxy to (\"se.example.org:1094\", \"*.example.org\")")
	case t.ProxyFile == "" && len(t.ProxyHosts) > 0:
		add("tpc.proxy_hosts", "set, but proxy_file is not: give the proxy the box presents to them")
	}
	if _, err := tpcallow.Parse(t.Allow); err != nil {
		add("tpc.allow", "%v", err)
	}
	if n := int64(t.BufferMemory); n != 0 && n < tpc.MinBudget {
		add("tpc.buffer_memory", "%q is not a size of at least %s (one copy chunk)", t.BufferMemory, units.FormatSize(tpc.MinBudget))
	}
	return l.All
}
