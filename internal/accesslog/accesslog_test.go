package accesslog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func entry(path string) Entry {
	return Entry{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Proto: "root", Op: "read", Client: "10.0.0.1",
		Auth: "token", Issuer: "https://iss", Subject: "alice", VO: "cms", Path: path, Bytes: 42, Duration: 1500 * time.Millisecond, Result: "ok"}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name, format, path, want string
	}{
		{"text", "text", "/store/a.bin", `time=2026-01-02T03:04:05Z proto=root op=read client=10.0.0.1 auth=token issuer=https://iss subject=alice vo=cms path=/store/a.bin bytes=42 duration=1.500s result=ok` + "\n"},
		{"text quotes a forged field", "text", "/store/a b=1\nresult=ok", `path="/store/a b=1\nresult=ok"`},
		{"json", "json", "/store/a.bin", `{"time":"2026-01-02T03:04:05Z","proto":"root","op":"read","client":"10.0.0.1","auth":"token","issuer":"https://iss","subject":"alice","vo":"cms","path":"/store/a.bin","bytes":42,"duration_s":1.5,"result":"ok"}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "access.log")
			l, err := Open(file, tc.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			l.Transfer(entry(tc.path))
			l.Close()
			b, _ := os.ReadFile(file)
			if !strings.Contains(string(b), tc.want) || strings.Count(string(b), "\n") != 1 {
				t.Errorf("got %q, want it to contain %q on one line", b, tc.want)
			}
			if tc.format == "json" {
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// An X.509 user is named by DN, with how it was proven and its FQANs;
// an anonymous client by neither.
func TestX509AndAnonymous(t *testing.T) {
	x := entry("/store/vo/f")
	x.Auth, x.Issuer, x.Subject = "x509", "x509:/DC=org/CN=CA", "/DC=org/CN=Alice Example"
	x.FQANs = []string{"/testvo/Role=production/Capability=NULL", "/testvo/Role=NULL/Capability=NULL"}
	anon := entry("/pub/f")
	anon.Auth, anon.Issuer, anon.Subject, anon.VO = "", "", "", ""
	for _, c := range []struct {
		format string
		e      Entry
		want   string
	}{
		{"text", x, `client=10.0.0.1 auth=x509 issuer="x509:/DC=org/CN=CA" subject="/DC=org/CN=Alice Example" vo=cms ` +
			`fqans="/testvo/Role=production/Capability=NULL,/testvo/Role=NULL/Capability=NULL" path=/store/vo/f `},
		{"json", x, `"auth":"x509","issuer":"x509:/DC=org/CN=CA","subject":"/DC=org/CN=Alice Example","vo":"cms",` +
			`"fqans":["/testvo/Role=production/Capability=NULL","/testvo/Role=NULL/Capability=NULL"],"path":"/store/vo/f"`},
		{"text", anon, `client=10.0.0.1 path=/pub/f `},
	} {
		file := filepath.Join(t.TempDir(), "access.log")
		l, err := Open(file, c.format, nil)
		if err != nil {
			t.Fatal(err)
		}
		l.Transfer(c.e)
		l.Close()
		if b, _ := os.ReadFile(file); !strings.Contains(string(b), c.want) {
			t.Errorf("%s: got %q, want it to contain %q", c.format, b, c.want)
		}
	}
}

// A log moved away (logrotate) is reopened at its name.
func TestReopenAfterRotation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "access.log")
	l, err := Open(file, "text", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Transfer(entry("/one"))
	if err := os.Rename(file, file+".1"); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.checked = time.Time{} // as if a second had passed
	l.mu.Unlock()
	l.Transfer(entry("/two"))
	old, _ := os.ReadFile(file + ".1")
	cur, _ := os.ReadFile(file)
	if !strings.Contains(string(old), "path=/one") || !strings.Contains(string(cur), "path=/two") || strings.Contains(string(cur), "/one") {
		t.Errorf("after rotation: old %q, new %q", old, cur)
	}
}

// An X.509 client's line names its DN under x509:<CA> and its FQANs,
// comma-separated (quoted, as they hold '=').
func TestFormatsX509(t *testing.T) {
	e := entry("/store/a.bin")
	e.Issuer, e.Subject, e.VO = "x509:/DC=org/DC=example/CN=Test CA", "/DC=org/DC=example/CN=Alice", "cms"
	e.FQANs = []string{"/cms/Role=NULL/Capability=NULL", "/cms/prod/Role=production/Capability=NULL"}
	for format, want := range map[string]string{
		"text": `issuer="x509:/DC=org/DC=example/CN=Test CA" subject="/DC=org/DC=example/CN=Alice" vo=cms fqans="/cms/Role=NULL/Capability=NULL,/cms/prod/Role=production/Capability=NULL" path=/store/a.bin`,
		"json": `"issuer":"x509:/DC=org/DC=example/CN=Test CA","subject":"/DC=org/DC=example/CN=Alice","vo":"cms","fqans":["/cms/Role=NULL/Capability=NULL","/cms/prod/Role=production/Capability=NULL"],"path":"/store/a.bin"`,
	} {
		file := filepath.Join(t.TempDir(), "access.log")
		l, err := Open(file, format, nil)
		if err != nil {
			t.Fatal(err)
		}
		l.Transfer(e)
		l.Close()
		if b, _ := os.ReadFile(file); !strings.Contains(string(b), want) {
			t.Errorf("%s: got %q, want it to contain %q", format, b, want)
		}
	}
}

func TestBadFormat(t *testing.T) {
	if _, err := Open("stderr", "xml", nil); err == nil || !strings.Contains(err.Error(), "xml") {
		t.Errorf("format xml: %v", err)
	}
}
