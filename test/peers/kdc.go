package peers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// KDCTools are the MIT Kerberos programs a KDC needs (Debian krb5-kdc,
// krb5-admin-server, krb5-user).
var KDCTools = []string{"krb5kdc", "kdb5_util", "kadmin.local", "kinit"}

// KDC is a real MIT KDC on 127.0.0.1 with a throwaway realm, its own
// krb5.conf and kdc.conf in its directory: nothing of the machine's
// Kerberos setup is read or changed.
type KDC struct {
	*Process
	Realm string
	Dir   string
	// Env points Kerberos programs at this realm: KRB5_CONFIG and
	// KRB5_KDC_PROFILE.
	Env []string
}

// StartKDC creates realm's database in dir (empty, made if missing) and
// starts krb5kdc. Stop it with Stop.
func StartKDC(ctx context.Context, dir, realm string) (*KDC, error) {
	for _, tool := range KDCTools {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("start KDC: %s not installed (krb5-kdc, krb5-admin-server, krb5-user): %w", tool, err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start KDC: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p := strconv.Itoa(port)
	logFile := filepath.Join(dir, "kdc.log")
	krb5conf := "[libdefaults]\n default_realm = " + realm + "\n dns_lookup_kdc = false\n dns_lookup_realm = false\n" +
		" dns_canonicalize_hostname = false\n rdns = false\n udp_preference_limit = 1\n forwardable = true\n" +
		"[realms]\n " + realm + " = {\n  kdc = 127.0.0.1:" + p + "\n }\n"
	kdcconf := "[kdcdefaults]\n kdc_ports = " + p + "\n kdc_tcp_ports = " + p + "\n" +
		"[realms]\n " + realm + " = {\n  database_name = " + filepath.Join(dir, "principal") + "\n" +
		"  key_stash_file = " + filepath.Join(dir, "stash") + "\n  acl_file = " + filepath.Join(dir, "kadm5.acl") + "\n" +
		"  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n  max_life = 1h\n }\n" +
		"[logging]\n kdc = FILE:" + logFile + "\n"
	conf, prof := filepath.Join(dir, "krb5.conf"), filepath.Join(dir, "kdc.conf")
	for f, text := range map[string]string{conf: krb5conf, prof: kdcconf, filepath.Join(dir, "kadm5.acl"): ""} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			return nil, fmt.Errorf("start KDC: %w", err)
		}
	}
	k := &KDC{Realm: realm, Dir: dir, Env: []string{"KRB5_CONFIG=" + conf, "KRB5_KDC_PROFILE=" + prof}}
	if _, err := k.run(ctx, "", "kdb5_util", "create", "-s", "-r", realm, "-P", "throwaway-master-key"); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "krb5kdc", "-n", "-r", realm)
	cmd.Env = append(os.Environ(), k.Env...)
	if k.Process, err = start(ctx, "krb5kdc", cmd, []int{port}, logFile); err != nil {
		return nil, err
	}
	return k, nil
}

// run runs a Kerberos program against the realm.
func (k *KDC) run(ctx context.Context, stdin, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), k.Env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Admin runs one kadmin.local query ("addprinc -randkey HTTP/host").
func (k *KDC) Admin(ctx context.Context, query string) error {
	_, err := k.run(ctx, "", "kadmin.local", "-r", k.Realm, "-q", query)
	return err
}

// Keytab adds principals with random keys and exports them to a new
// keytab in the KDC's directory, returning its path.
func (k *KDC) Keytab(ctx context.Context, name string, principals ...string) (string, error) {
	kt := filepath.Join(k.Dir, name)
	for _, p := range principals {
		if err := k.Admin(ctx, "addprinc -randkey "+p); err != nil {
			return "", err
		}
	}
	return kt, k.Admin(ctx, "ktadd -k "+kt+" "+strings.Join(principals, " "))
}

// Kinit gets a TGT for principal with password into the credential
// cache file ccache (extra kinit flags first, e.g. "-l", "5s") and
// returns the environment of a client using it.
func (k *KDC) Kinit(ctx context.Context, principal, password, ccache string, flags ...string) ([]string, error) {
	env := append(append([]string{}, k.Env...), "KRB5CCNAME=FILE:"+ccache)
	cmd := exec.CommandContext(ctx, "kinit", append(flags, principal)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kinit %s: %w: %s", principal, err, strings.TrimSpace(string(out)))
	}
	return env, nil
}
