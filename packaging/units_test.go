package packaging

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unit reads a systemd unit into section → key → values (keys repeat).
func unit(t *testing.T, file string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" || strings.TrimSpace(k) == "" {
				t.Fatalf("%s:%d: not a key=value line in a section: %q", file, n, line)
			}
			out[section][strings.TrimSpace(k)] = append(out[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return out
}

// The units run the box as its own user, hardened, with only the
// capabilities the job runner needs; systemd accepts every line.
func TestSystemdUnits(t *testing.T) {
	files, _ := filepath.Glob("systemd/*.service")
	if len(files) != 2 {
		t.Fatalf("units: %v", files)
	}
	allowed := []string{"CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_KILL"}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			svc := unit(t, f)["Service"]
			for k, want := range map[string]string{"User": "sitebox", "Group": "sitebox", "NoNewPrivileges": "yes",
				"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "ProtectKernelTunables": "yes",
				"ProtectKernelModules": "yes", "KillMode": "process"} {
				if got := svc[k]; len(got) != 1 || got[0] != want {
					t.Errorf("%s=%v, want %s", k, got, want)
				}
			}
			for _, k := range []string{"ReadWritePaths", "StateDirectory", "RestrictAddressFamilies"} {
				if len(svc[k]) == 0 {
					t.Errorf("%s is missing", k)
				}
			}
			bound := strings.Fields(strings.Join(svc["CapabilityBoundingSet"], " "))
			if len(bound) == 0 {
				t.Error("CapabilityBoundingSet is missing: the box would keep every capability")
			}
			for _, c := range append(bound, strings.Fields(strings.Join(svc["AmbientCapabilities"], " "))...) {
				if !slices.Contains(allowed, c) || !slices.Contains(bound, c) {
					t.Errorf("capability %s: only %v, and ambient ones within the bounding set", c, allowed)
				}
			}
			verify(t, f)
		})
	}
}

// The example .mount and .automount units mount /fed with the helper
// the package installs, and systemd accepts them.
func TestMountUnitExamples(t *testing.T) {
	m := unit(t, "systemd/examples/fed.mount")["Mount"]
	for k, want := range map[string]string{"Type": "fuse.sitebox", "Where": "/fed", "What": "root://cache.site:1094//store"} {
		if got := m[k]; len(got) != 1 || got[0] != want {
			t.Errorf("fed.mount %s=%v, want %s", k, got, want)
		}
	}
	if o := strings.Join(m["Options"], ","); !strings.Contains(o, "_netdev") || !strings.Contains(o, "allow_other") {
		t.Errorf("fed.mount Options=%s: want a network mount for every user", o)
	}
	if a := unit(t, "systemd/examples/fed.automount")["Automount"]; len(a["Where"]) != 1 || a["Where"][0] != "/fed" {
		t.Errorf("fed.automount Where=%v, want /fed", a["Where"])
	}
	for _, f := range []string{"fed.mount", "fed.automount"} {
		b, err := os.ReadFile(filepath.Join("systemd/examples", f))
		if err != nil {
			t.Fatal(err)
		}
		verifyText(t, f, string(b), "/usr/local/bin/sitebox")
	}
}

// verify runs systemd-analyze verify where it exists: any complaint about
// the unit (an unknown key, a bad value) fails. The binary is replaced
// by /bin/true, which every machine has.
func verify(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	verifyText(t, filepath.Base(file), string(b), "/usr/local/bin/sitebox")
}

// verifyText verifies a unit named name whose text runs bin.
func verifyText(t *testing.T, name, text, bin string) {
	t.Helper()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is missing (apt-get install systemd)")
		}
		t.Log("systemd-analyze not found; the unit was only parsed")
		return
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, bin, "/bin/true")), 0o644)
	arg := "./" + strings.Replace(name, "@.", "@probe.", 1)
	cmd := exec.Command(sa, "verify", arg)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var complaints []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, strings.TrimSuffix(name, ".service")) {
			complaints = append(complaints, l)
		}
	}
	if err != nil || len(complaints) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", name, err, out)
	}
}
