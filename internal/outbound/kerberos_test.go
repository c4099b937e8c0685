package outbound

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/test/testdata"
)

// Where the Kerberos library looks: KRB5CCNAME (FILE: or a path), else
// /tmp/krb5cc_<uid>; other cache types are named, not silently skipped.
func TestUserCCache(t *testing.T) {
	dir := t.TempDir()
	uid := os.Getuid()
	cc := filepath.Join(dir, "cc")
	os.WriteFile(cc, []byte("x"), 0o600)
	for _, env := range []string{"FILE:" + cc, cc} {
		f, ok, err := UserCCache(envOf(map[string]string{"KRB5CCNAME": env}), uid)
		if err != nil || !ok || f != cc {
			t.Errorf("KRB5CCNAME=%s: %q %v %v; want %s", env, f, ok, err, cc)
		}
	}
	if _, ok, err := UserCCache(envOf(map[string]string{"KRB5CCNAME": "FILE:" + filepath.Join(dir, "none")}), uid); ok || err != nil {
		t.Errorf("a KRB5CCNAME naming no file (after kdestroy): %v %v; want none, no error", ok, err)
	}
	_, _, err := UserCCache(envOf(map[string]string{"KRB5CCNAME": "KEYRING:persistent:1000"}), uid)
	if err == nil || !strings.Contains(err.Error(), "KEYRING: credential cache cannot be read") {
		t.Errorf("a keyring cache: %v", err)
	}
	other := uid + 23456 // a uid nobody uses here
	def := UserCCachePath(other)
	if def != "/tmp/krb5cc_"+strconv.Itoa(other) {
		t.Fatalf("default cache %s", def)
	}
	if _, ok, _ := UserCCache(envOf(nil), other); ok {
		t.Fatalf("%s exists already", def)
	}
	if err := os.WriteFile(def, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(def)
	if f, ok, err := UserCCache(envOf(nil), other); f != def || !ok || err != nil {
		t.Errorf("the default cache: %q %v %v", f, ok, err)
	}
}

// A credential cache holds session keys: besides OwnedFile's checks,
// nobody else may read it.
func TestOwnedSecretFile(t *testing.T) {
	dir := t.TempDir()
	uid := os.Getuid()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("cc"), 0o600)
	if err := OwnedSecretFile(good, uid); err != nil {
		t.Fatalf("the user's own 0600 cache: %v", err)
	}
	readable := filepath.Join(dir, "readable")
	os.WriteFile(readable, []byte("cc"), 0o600)
	os.Chmod(readable, 0o640)
	writable := filepath.Join(dir, "writable")
	os.WriteFile(writable, []byte("cc"), 0o600)
	os.Chmod(writable, 0o602)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	for name, c := range map[string]struct {
		file string
		uid  int
		want string
	}{
		"someone else's":  {good, uid + 1, "does not belong"},
		"group-readable":  {readable, uid, "readable by others"},
		"others-writable": {writable, uid, "writable by others"},
		"a symbolic link": {link, uid, "symbolic link"},
	} {
		err := OwnedSecretFile(c.file, c.uid)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to say %q", name, err, c.want)
		}
		if _, err := NewKerberosFile(c.file, c.uid, "/nonexistent").Get(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Get: %v; want it to say %q", name, err, c.want)
		}
	}
}

// A cache is read with its principal; expired tickets are named with
// the cure, and a file that is no cache says so.
func TestKerberosFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	os.WriteFile(conf, []byte("[libdefaults]\n default_realm = TEST.GOKRB5\n[realms]\n TEST.GOKRB5 = {\n  kdc = 127.0.0.1:1\n }\n"), 0o600)
	b, _ := hex.DecodeString(testdata.CCACHE_TEST)
	cc := filepath.Join(dir, "cc")
	os.WriteFile(cc, b, 0o600)
	kf := NewKerberosFile(cc, os.Getuid(), conf)
	k, err := kf.Get()
	if err != nil {
		t.Fatal(err)
	}
	if k.Principal() != "testuser1@TEST.GOKRB5" {
		t.Errorf("principal %q", k.Principal())
	}
	if again, _ := kf.Get(); again != k {
		t.Error("an unchanged cache was read again")
	}
	if _, err := k.APReq("xrootd/host.test.gokrb5"); err == nil || !strings.Contains(err.Error(), "run kinit again") {
		t.Errorf("tickets of 2017: %v", err)
	}
	os.WriteFile(cc, []byte("not a cache"), 0o600)
	if _, err := kf.Get(); err == nil || !strings.Contains(err.Error(), "not a Kerberos credential cache") {
		t.Errorf("a file that is no cache: %v", err)
	}
}

func TestKerberosConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	os.WriteFile(conf, nil, 0o600)
	if f := KerberosConfigFile(envOf(map[string]string{"KRB5_CONFIG": filepath.Join(dir, "none") + ":" + conf})); f != conf {
		t.Errorf("KRB5_CONFIG list: %s", f)
	}
	if f := KerberosConfigFile(envOf(nil)); f != "/etc/krb5.conf" {
		t.Errorf("default: %s", f)
	}
}

// A krb5.conf with what the Go library does not support (v4 settings)
// is still used for the rest, as MIT's library would.
func TestLoadConfigUnsupported(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "krb5.conf")
	os.WriteFile(conf, []byte("[realms]\n EXAMPLE.ORG = {\n  kdc = 127.0.0.1:88\n  v4_realm = OLD\n }\n"), 0o600)
	c, err := loadConfig(conf)
	if err != nil || len(c.Realms) != 1 || c.Realms[0].KDC[0] != "127.0.0.1:88" {
		t.Errorf("%+v, %v", c, err)
	}
	if _, err := loadConfig(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "kerberos: configuration") {
		t.Errorf("a missing krb5.conf: %v", err)
	}
}
