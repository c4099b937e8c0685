package config

import "sitebox/internal/tpc/tpcallow"

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
}

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
