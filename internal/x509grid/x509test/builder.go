// Package x509test makes grid credentials for tests: CAs, user and host
// certificates, CRLs, RFC 3820 proxies and VOMS proxies, with the real
// tools (openssl, grid-proxy-init, voms-proxy-fake) at test time, and
// the CA directory and vomsdir that trust them. Nothing with a key is
// committed. Tests of any package that takes grid credentials build
// their fixtures with it, and the benchmarks (test/bench) their
// grid; nothing the box runs imports it.
package x509test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// Builder runs the tools in one directory. The first failure sticks and
// every later call does nothing, so a fixture is written as a sequence
// of calls checked once with OK or Err.
type Builder struct {
	// Dir holds every file the builder makes.
	Dir string
	// Bits is the size of the RSA keys made (default 1024, which keeps
	// the tests fast; OpenSSL's TLS at its default security level wants
	// 2048 for certificates it presents or verifies in a handshake).
	Bits int
	// Ctx bounds the tools' runs (nil: no bound).
	Ctx context.Context
	err error
	n   int // for unique file names
}

func (b *Builder) bits() string {
	if b.Bits == 0 {
		return "1024"
	}
	return fmt.Sprint(b.Bits)
}

// NewBuilder makes files in dir (which must exist), starting with
// ext.cnf, the extension profiles (ExtensionsConf) proxies are made with.
func NewBuilder(dir string) *Builder {
	b := &Builder{Dir: dir}
	b.Write("ext.cnf", ExtensionsConf)
	return b
}

// Err is the first failure, if any.
func (b *Builder) Err() error { return b.err }

// Fail records err as the failure, unless one is recorded already.
func (b *Builder) Fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// OK fails the test if making a credential failed.
func (b *Builder) OK(t testing.TB) {
	t.Helper()
	if b.err != nil {
		t.Fatalf("making credentials: %v", b.err)
	}
}

// Run runs a tool in Dir and returns its standard output.
func (b *Builder) Run(name string, args ...string) string {
	if b.err != nil {
		return ""
	}
	ctx := b.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(), "RANDFILE="+filepath.Join(b.Dir, ".rnd"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		b.err = fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// Path is name inside Dir.
func (b *Builder) Path(name string) string { return filepath.Join(b.Dir, name) }

// Unique is prefix with a number no earlier call returned.
func (b *Builder) Unique(prefix string) string {
	b.n++
	return fmt.Sprintf("%s-%d", prefix, b.n)
}

// Write writes text to name in Dir and returns its path.
func (b *Builder) Write(name, text string) string {
	p := b.Path(name)
	if b.err == nil {
		b.err = os.WriteFile(p, []byte(text), 0o600)
	}
	return p
}

// Cat writes the files' contents, in order, to name in Dir.
func (b *Builder) Cat(name string, files ...string) string {
	var all []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fail(err)
		}
		all = append(all, data...)
	}
	p := b.Path(name)
	if b.err == nil {
		b.err = os.WriteFile(p, all, 0o600)
	}
	return p
}

// Mkdir makes dir and its parents.
func (b *Builder) Mkdir(dir string) {
	if b.err == nil {
		b.err = os.MkdirAll(dir, 0o755)
	}
}

// CopyTo copies the file src to dst (mode 0644).
func (b *Builder) CopyTo(src, dst string) {
	if b.err != nil {
		return
	}
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, data, 0o644)
	}
	b.err = err
}

// RequireTools skips a test when a tool is missing, or fails it under
// CI=true, where a missing tool must not pass silently (peers.Require);
// scripts/setup.sh installs them all.
func RequireTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		peers.Require(t, tool)
	}
}

// ToolsPresent reports whether every tool is installed.
func ToolsPresent(tools ...string) bool {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return false
		}
	}
	return true
}

// Ago and Ahead give `openssl ca -startdate/-enddate` times.
func Ago(d time.Duration) string   { return time.Now().Add(-d).UTC().Format("20060102150405Z") }
func Ahead(d time.Duration) string { return time.Now().Add(d).UTC().Format("20060102150405Z") }
