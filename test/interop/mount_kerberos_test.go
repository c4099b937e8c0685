package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"sitebox/test/peers"
)

// TestMountPerCallerKerberos: a mount for every user of a box that takes
// Kerberos, run by root with --allow-other. Two callers, each with the
// tickets of their own principal in /tmp/krb5cc_<uid>, read their own
// area and are refused the other's, as the box's policy says for their
// principal; a third, whose /tmp/krb5cc_<uid> someone else planted, is
// refused with the reason in the mount's log.
func TestMountPerCallerKerberos(t *testing.T) {
	requireFUSE(t)
	if os.Geteuid() != 0 {
		peers.RequireFile(t, filepath.Join(t.TempDir(), "running-as-root"), "root (--allow-other for other users)")
	}
	// Callers are uids no account has: the job tests' reapers remove
	// whatever their slot users leave in /tmp, credential caches included.
	callers := []uint32{4243, 4244, 4245}
	kdc := startKDC(t, krbRealm)
	keytab := kdc.servicePrincipals(t, "xrootd/localhost", "HTTP/localhost")
	// Each user of the realm reads only their own area.
	own := func(s string) string {
		return strings.Replace(s, `"storage.read:/store",`, `"storage.read:/store/user/{user}",`, 1)
	}
	box, pool := kerberosBoxEdit(t, keytab, "", "", own)
	users := []string{"alice", "bob"}
	for i, name := range users {
		kdc.user(t, name, name+"-pw")
		os.WriteFile(filepath.Join(pool, "user", name, "mine.txt"), []byte(name+"'s\n"), 0o644)
		ccacheFor(t, kdc, callers[i], name)
	}
	planted := ccachePath(t, callers[2]) // valid tickets, but root's file
	if _, err := kdc.Kinit(t.Context(), "alice", "alice-pw", planted); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", filepath.Join(kdc.Dir, "krb5.conf")) // the mount's krb5.conf
	for _, c := range []struct {
		name  string
		proto string
	}{{"root", "root://localhost:" + strconv.Itoa(portOf(box.rootHost))},
		{"https", "https://localhost:" + strconv.Itoa(portOf(strings.TrimPrefix(box.httpsURL, "https://")))}} {
		t.Run(c.name, func(t *testing.T) {
			m := startMount(t, c.proto+"//store/user", "--allow-other", "--ca", box.certFile)
			os.Chmod(filepath.Dir(m.dir), 0o711) // reachable, not listable (see TestMountPerCaller)
			for i, name := range users {
				other := users[1-i]
				if out, err := asUID(callers[i], "cat", filepath.Join(m.dir, name, "mine.txt")); err != nil || out != name+"'s\n" {
					t.Errorf("%s reading their own file: %q, %v", name, out, err)
				}
				if out, err := asUID(callers[i], "cat", filepath.Join(m.dir, other, "mine.txt")); err == nil || !strings.Contains(out, "Permission denied") {
					t.Errorf("%s reading %s's file: %q, %v; want EACCES", name, other, out, err)
				}
			}
			if out, err := asUID(callers[2], "cat", filepath.Join(m.dir, "alice", "mine.txt")); err == nil || !strings.Contains(out, "Permission denied") {
				t.Errorf("a caller with a planted credential cache: %q, %v; want EACCES", out, err)
			}
			if !m.logs(planted + " does not belong to uid " + strconv.Itoa(int(callers[2]))) {
				t.Errorf("the mount's log does not say why the planted cache was refused:\n%s", m.log.String())
			}
		})
	}
	log := box.proc.Log.String()
	for _, name := range users {
		if !strings.Contains(log, "issuer=krb5:EXAMPLE.ORG subject="+name) {
			t.Errorf("the box did not authenticate %s by Kerberos", name)
		}
	}
}

// TestMountKerberosOwn: a user's own mount (no --allow-other) presents
// the tickets $KRB5CCNAME names, as sitebox get does.
func TestMountKerberosOwn(t *testing.T) {
	requireFUSE(t)
	kdc := startKDC(t, krbRealm)
	keytab := kdc.servicePrincipals(t, "xrootd/localhost", "HTTP/localhost")
	kdc.user(t, "alice", "alice-pw")
	box, pool := kerberosBox(t, kdc, keytab, "", "")
	os.WriteFile(filepath.Join(pool, "user", "alice", "mine.txt"), []byte("alice's\n"), 0o644)
	for _, kv := range kdc.kinit(t, "alice", "alice-pw") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	m := startMount(t, "root://localhost:"+strconv.Itoa(portOf(box.rootHost))+"//store/user/alice")
	if b, err := os.ReadFile(filepath.Join(m.dir, "mine.txt")); err != nil || string(b) != "alice's\n" {
		t.Errorf("reading through a mount with alice's tickets: %q, %v", b, err)
	}
	if !strings.Contains(box.proc.Log.String(), "protocol=krb5 issuer=krb5:EXAMPLE.ORG subject=alice") {
		t.Errorf("the box did not authenticate the mount by krb5")
	}
}

// ccachePath is /tmp/krb5cc_<uid>, which must not exist yet (the test
// would replace someone's tickets); cleanup removes it.
func ccachePath(t *testing.T, uid uint32) string {
	t.Helper()
	f := "/tmp/krb5cc_" + strconv.Itoa(int(uid))
	if _, err := os.Lstat(f); err == nil {
		t.Fatalf("%s exists already; the test would replace someone's tickets", f)
	}
	t.Cleanup(func() { os.Remove(f) })
	return f
}

// ccacheFor kinits principal into uid's default credential cache, owned
// by uid as kinit run by that user would leave it.
func ccacheFor(t *testing.T, kdc *testKDC, uid uint32, principal string) {
	t.Helper()
	f := ccachePath(t, uid)
	if _, err := kdc.Kinit(t.Context(), principal, principal+"-pw", f); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(f, int(uid), int(uid)); err != nil {
		t.Fatal(err)
	}
}

// asUID runs a command as uid (its group the same number).
func asUID(uid uint32, args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
