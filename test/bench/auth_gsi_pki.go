package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"sitebox/internal/x509grid/x509test"
)

// gsiBenchVO is the VO of the measured proxy.
const gsiBenchVO = "benchvo"

// gridFiles are a throwaway grid for the gsi rows: a CA directory and a
// vomsdir, a host certificate for localhost, and a user's VOMS proxy,
// all with 2048-bit RSA keys.
type gridFiles struct {
	caDir, vomsDir    string
	hostCert, hostKey string
	proxy             string
}

// makeGrid writes the grid below dir with the credential maker the
// tests use (openssl, voms-proxy-fake).
func makeGrid(ctx context.Context, dir string) (*gridFiles, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench auth: make the grid credentials: %w", err)
	}
	b := x509test.NewBuilder(dir)
	b.Bits, b.Ctx = 2048, ctx
	const caDN, vomsDN, vomsHost = "/DC=org/DC=bench/CN=Bench CA", "/DC=org/DC=bench/CN=voms.bench", "voms.bench"
	ca := b.NewRootCA("ca", caDN, false)
	host := b.Issue(ca, "host", "/DC=org/DC=bench/CN=localhost", "v3_host_local")
	user := b.Issue(ca, "user", "/DC=org/DC=bench/CN=Bench User", "v3_user")
	voms := b.Issue(ca, "voms", vomsDN, "v3_host")
	g := &gridFiles{caDir: b.Path("certificates"), vomsDir: b.Path("vomsdir"), hostCert: host.Cert, hostKey: host.Key}
	b.InstallCA(g.caDir, []*x509test.CA{ca})
	b.LSC(g.vomsDir, gsiBenchVO, vomsHost, vomsDN, caDN)
	g.proxy = b.VOMSProxy(user, voms, g.caDir, gsiBenchVO, vomsHost, []string{"/" + gsiBenchVO + "/Role=NULL/Capability=NULL"}).Chain
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("bench auth: make the grid credentials: %w", err)
	}
	return g, nil
}

// copyForXrootd copies the grid's CA directory, vomsdir and host
// credential below sec for the xrootd peer, which runs as user xrootd
// and wants its key readable by it alone; it returns the copies'
// CA directory, vomsdir, certificate and key.
func copyForXrootd(sec string, grid *gridFiles) (certs, vomsDir, cert, key string, err error) {
	certs, vomsDir = filepath.Join(sec, "certificates"), filepath.Join(sec, "vomsdir")
	cert, key = filepath.Join(sec, "host.pem"), filepath.Join(sec, "host.key")
	b := &x509test.Builder{Dir: sec}
	for src, dst := range map[string]string{grid.caDir: certs, filepath.Join(grid.vomsDir, gsiBenchVO): filepath.Join(vomsDir, gsiBenchVO)} {
		b.Mkdir(dst)
		entries, err := os.ReadDir(src)
		b.Fail(err)
		for _, e := range entries {
			b.CopyTo(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
		}
	}
	b.CopyTo(grid.hostCert, cert)
	b.CopyTo(grid.hostKey, key)
	if b.Err() == nil {
		b.Fail(os.Chmod(key, 0o400))
	}
	return certs, vomsDir, cert, key, b.Err()
}
