package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// need finds a tool the package test runs; under CI a missing one fails.
func need(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (apt-get install dpkg fakeroot systemd)", name)
		}
		t.Skipf("%s not found", name)
	}
	return p
}

// buildDeb runs scripts/package.sh as an operator would, into a temp dir.
func buildDeb(t *testing.T) string {
	t.Helper()
	need(t, "go")
	dist := t.TempDir()
	cmd := exec.Command("../scripts/package.sh", "1.2.3")
	cmd.Env = append(os.Environ(), "DIST="+dist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/package.sh: %v\n%s", err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dist, "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("package.sh made %v", debs)
	}
	return debs[0]
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The .deb holds the binary, the hardened units pointing at it, the
// sample config as a conffile kept on upgrade, the examples and the
// maintainer scripts; its units pass systemd-analyze verify; installed
// into a throwaway root it makes the sitebox user, the directories with
// their owners and modes, and a config the installed binary accepts and
// serves as the sitebox user; a reinstall (upgrade) changes nothing an
// operator set; purge removes state.
func TestDeb(t *testing.T) {
	need(t, "dpkg-deb")
	deb := buildDeb(t)

	info := run(t, "dpkg-deb", "-I", deb)
	for _, want := range []string{"Package: sitebox", "Version: 1.2.3", "Depends: passwd", "postinst", "prerm", "postrm"} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb -I: no %q in\n%s", want, info)
		}
	}
	ctrl := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, ctrl)
	if b, _ := os.ReadFile(filepath.Join(ctrl, "conffiles")); strings.TrimSpace(string(b)) != "/etc/sitebox/sitebox.toml" {
		t.Errorf("conffiles = %q, want the sample config only", b)
	}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		run(t, "sh", "-n", filepath.Join(ctrl, s))
	}

	contents := run(t, "dpkg-deb", "-c", deb)
	for _, want := range []string{
		`-rwxr-xr-x root/root .* \./usr/bin/sitebox\n`,
		`-rw-r--r-- root/root .* \./lib/systemd/system/sitebox\.service\n`,
		`-rw-r--r-- root/root .* \./lib/systemd/system/sitebox@\.service\n`,
		`drwxr-x--- root/root .* \./etc/sitebox/\n`,
		`-rw-r----- root/root .* \./etc/sitebox/sitebox\.toml\n`,
		`\./usr/share/doc/sitebox/examples/origin\.toml\n`,
		`\./usr/share/doc/sitebox/examples/cache\.toml\n`,
		// The helper mount(8) runs for type fuse.sitebox, and how to use it.
		`lrwxrwxrwx root/root .* \./sbin/mount\.fuse\.sitebox -> /usr/bin/sitebox\n`,
		`\./usr/share/doc/sitebox/examples/fed\.mount\n`,
		`\./usr/share/doc/sitebox/examples/fed\.automount\n`,
		`\./usr/share/doc/sitebox/mount\.md\n`,
	} {
		if !regexp.MustCompile(want).MatchString(contents) {
			t.Errorf("dpkg-deb -c: nothing matches %q in\n%s", want, contents)
		}
	}

	files := t.TempDir()
	run(t, "dpkg-deb", "-x", deb, files)
	for _, u := range []string{"sitebox.service", "sitebox@.service"} {
		b, err := os.ReadFile(filepath.Join(files, "lib/systemd/system", u))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "=/usr/local/bin") || !strings.Contains(string(b), "ExecStart=/usr/bin/sitebox serve") {
			t.Errorf("%s does not run the packaged /usr/bin/sitebox", u)
		}
		verifyText(t, u, string(b), "/usr/bin/sitebox")
	}

	t.Run("install", func(t *testing.T) { installInRoot(t, deb) })
}
