package interop

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/peers"
)

// testKDC is a real MIT KDC on loopback with a throwaway realm, its own
// krb5.conf and kdc.conf: nothing of the machine's Kerberos is used.
type testKDC struct {
	realm, dir string
	env        []string // KRB5_CONFIG and KRB5_KDC_PROFILE
	log        string   // the KDC's log file
}

// startKDC creates realm's database and starts krb5kdc, stopped at the
// end of the test.
func startKDC(t *testing.T, realm string) *testKDC {
	t.Helper()
	for _, tool := range []string{"krb5kdc", "kdb5_util", "kadmin.local", "kinit", "kdestroy"} {
		peers.Require(t, tool) // scripts/setup.sh installs krb5-kdc, krb5-admin-server, krb5-user
	}
	dir := t.TempDir()
	port, _ := peers.FreePort()
	p := strconv.Itoa(port)
	k := &testKDC{realm: realm, dir: dir, log: filepath.Join(dir, "kdc.log")}
	krb5conf := "[libdefaults]\n default_realm = " + realm + "\n dns_lookup_kdc = false\n dns_lookup_realm = false\n" +
		" dns_canonicalize_hostname = false\n rdns = false\n udp_preference_limit = 1\n forwardable = true\n" +
		"[realms]\n " + realm + " = {\n  kdc = 127.0.0.1:" + p + "\n }\n"
	kdcconf := "[kdcdefaults]\n kdc_ports = " + p + "\n kdc_tcp_ports = " + p + "\n" +
		"[realms]\n " + realm + " = {\n  database_name = " + filepath.Join(dir, "principal") + "\n" +
		"  key_stash_file = " + filepath.Join(dir, "stash") + "\n  acl_file = " + filepath.Join(dir, "kadm5.acl") + "\n" +
		"  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n  max_life = 1h\n }\n" +
		"[logging]\n kdc = FILE:" + k.log + "\n"
	conf, prof := filepath.Join(dir, "krb5.conf"), filepath.Join(dir, "kdc.conf")
	os.WriteFile(conf, []byte(krb5conf), 0o644)
	os.WriteFile(prof, []byte(kdcconf), 0o644)
	os.WriteFile(filepath.Join(dir, "kadm5.acl"), nil, 0o644)
	k.env = []string{"KRB5_CONFIG=" + conf, "KRB5_KDC_PROFILE=" + prof}
	k.run(t, "kdb5_util", "create", "-s", "-r", realm, "-P", "throwaway-master-key")

	cmd := exec.Command("krb5kdc", "-n", "-r", realm)
	cmd.Env = append(os.Environ(), k.env...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("krb5kdc: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			b, _ := os.ReadFile(k.log)
			t.Logf("KDC log:\n%s", b)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			b, _ := os.ReadFile(k.log)
			t.Fatalf("krb5kdc exited at start:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("krb5kdc does not listen on %s", p)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return k
}

// run runs a Kerberos admin tool against the test realm.
func (k *testKDC) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := runEnv(t, k.env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// kadmin runs one kadmin.local query.
func (k *testKDC) kadmin(t *testing.T, query string) {
	t.Helper()
	k.run(t, "kadmin.local", "-r", k.realm, "-q", query)
}

// servicePrincipals adds the box's principals with random keys and
// exports them to a keytab, returning its path.
func (k *testKDC) servicePrincipals(t *testing.T, principals ...string) string {
	t.Helper()
	kt := filepath.Join(k.dir, "box.keytab")
	for _, p := range principals {
		k.kadmin(t, "addprinc -randkey "+p)
	}
	k.kadmin(t, "ktadd -k "+kt+" "+strings.Join(principals, " "))
	return kt
}

// user adds a user principal with a password.
func (k *testKDC) user(t *testing.T, name, password string) {
	t.Helper()
	k.kadmin(t, "addprinc -pw "+password+" "+name)
}

// kinit gets a TGT for principal into a fresh credential cache and
// returns the client environment using it (extra kinit flags: -l 5s).
func (k *testKDC) kinit(t *testing.T, principal, password string, flags ...string) []string {
	t.Helper()
	cc := "FILE:" + filepath.Join(t.TempDir(), "cc")
	env := append(append([]string{}, k.env...), "KRB5CCNAME="+cc)
	cmd := exec.CommandContext(context.Background(), "kinit", append(flags, principal)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kinit %s: %v\n%s", principal, err, out)
	}
	return env
}
