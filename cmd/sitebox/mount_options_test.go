package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"sitebox/internal/remote"
)

// mountFlagSet is the flags of a fresh `sitebox mount`.
func mountFlagSet(t *testing.T) *pflag.FlagSet {
	t.Helper()
	root := newRootCmd()
	cmd, _, err := root.Find([]string{"mount"})
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Flags()
}

// An fstab line's options set the flags they name; the ones mount(8)
// and systemd pass for themselves change nothing.
func TestMountOptionsFromFstab(t *testing.T) {
	fl := mountFlagSet(t)
	err := applyMountOptions(fl, []string{"ro,allow_other,cache_dir=/var/cache/sitebox-mount,_netdev,nofail,noauto,x-systemd.automount,x-systemd.idle-timeout=60,defaults,user,users,nosuid,nodev,noexec,user=alice,comment=x",
		"dir_ttl=2m,attr_timeout=30s,protection=integrity,debug,noexec"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"read-only": "true", "allow-other": "true", "cache-dir": "/var/cache/sitebox-mount",
		"dir-ttl": "2m0s", "attr-timeout": "30s", "protection": "integrity", "debug": "true", "noexec": "true"} {
		if f := fl.Lookup(name); f.Value.String() != want || !f.Changed {
			t.Errorf("-o set --%s to %q (changed %v), want %q", name, f.Value.String(), f.Changed, want)
		}
	}
	if err := applyMountOptions(fl, []string{"rw"}); err != nil || fl.Lookup("read-only").Value.String() != "false" {
		t.Errorf("rw after ro: %v, read-only %s", err, fl.Lookup("read-only").Value)
	}
}

// A misspelt or malformed option is an error naming it.
func TestMountOptionsRefused(t *testing.T) {
	for opt, want := range map[string]string{
		"ro,cachedir=/x":      "-o cachedir: unknown mount option",
		"default_permissions": "-o default_permissions: unknown mount option",
		"options=ro":          "-o options: unknown mount option",
		"cache_dir":           "-o cache_dir: needs a value",
		"dir_ttl=soon":        "-o dir_ttl=soon:",
	} {
		err := applyMountOptions(mountFlagSet(t), []string{opt})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-o %s: %v, want %q", opt, err, want)
		}
	}
}

// mount(8) runs the helper as "mount.fuse.sitebox SOURCE DIR -o OPTS"
// with flags of its own; they become a background `sitebox mount`.
func TestMountHelperArgs(t *testing.T) {
	args, fake, err := mountHelperArgs([]string{"root://h:1094//store", "/fed", "-n", "-o", "ro,_netdev", "-t", "fuse.sitebox", "-ocache_dir=/c"})
	want := []string{"mount", "--background", "-o", "ro,_netdev", "-o", "cache_dir=/c", "--", "root://h:1094//store", "/fed"}
	if err != nil || fake || !slices.Equal(args, want) {
		t.Fatalf("helper args: %q, %v, %v; want %q", args, fake, err, want)
	}
	if _, fake, err := mountHelperArgs([]string{"-fv", "root://h//s", "/fed"}); err != nil || !fake {
		t.Errorf("mount -f: fake %v, %v", fake, err)
	}
	for _, bad := range [][]string{{"root://h//s"}, {"root://h//s", "/fed", "-N", "1"}, {"root://h//s", "/fed", "-t", "nfs"}, {"root://h//s", "/fed", "-o"}} {
		if _, _, err := mountHelperArgs(bad); err == nil {
			t.Errorf("helper args %q accepted", bad)
		}
	}
}

// The child of a background mount gets every flag given, the options
// applied, and not --background again.
func TestMountChildArgs(t *testing.T) {
	fl := mountFlagSet(t)
	fl.Parse([]string{"--background", "-o", "ro,dir_ttl=5s"})
	if err := applyMountOptions(fl, []string{"ro,dir_ttl=5s"}); err != nil {
		t.Fatal(err)
	}
	got := mountChildArgs(fl, "root://h//s", "/fed")
	want := []string{"mount", "--dir-ttl=5s", "--read-only=true", "--", "root://h//s", "/fed"}
	if !slices.Equal(got, want) {
		t.Errorf("child args %q, want %q", got, want)
	}
}

// privacy refuses a URL whose data would travel in clear, integrity
// one that can carry no checksums; page checks are for XRootD URLs.
func TestMountProtection(t *testing.T) {
	for _, c := range []struct {
		level, url string
		refused    bool
		pages      bool
	}{
		{"auth", "root://h//s", false, false},
		{"integrity", "root://h//s", false, true},
		{"integrity", "roots://h//s", false, true},
		{"integrity", "https://h/s", false, false},
		{"integrity", "http://h/s", true, false},
		{"privacy", "roots://h//s", false, true},
		{"privacy", "https://h/s", false, false},
		{"privacy", "root://h//s", true, false},
		{"privacy", "http://h/s", true, false},
	} {
		p, err := parseProtection(c.level)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := remote.Parse(c.url)
		if err := p.check(u); (err != nil) != c.refused || err != nil && !strings.Contains(err.Error(), c.url) {
			t.Errorf("%s over %s: %v, refused want %v", c.level, c.url, err, c.refused)
		}
		if !c.refused && p.pageChecks(u) != c.pages {
			t.Errorf("%s over %s: page checks %v", c.level, c.url, !c.pages)
		}
	}
	if _, err := parseProtection("krb5p"); err == nil || !strings.Contains(err.Error(), "want auth, integrity or privacy") {
		t.Errorf("an unknown level: %v", err)
	}
}
