package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// condorProc is HTCondor's reading of one proc (testdata/htcondor/condor_read.py).
type condorProc struct {
	Executable  string            `json:"executable"`
	Arguments   []string          `json:"arguments"`
	Environment map[string]string `json:"environment"`
	CPUs        int               `json:"cpus"`
	MemoryMB    int64             `json:"memory_mb"`
	DiskMB      int64             `json:"disk_mb"`
}

// The corpus of submit files (testdata/htcondor/*.sub) is read by the box
// and by HTCondor's own parser (htcondor2.Submit, from the htcondor
// bindings scripts/setup.sh installs; $SITEBOX_PYTHON runs it): each file
// is read identically — executable, arguments, environment, resources,
// proc count — or refused by the box with a line and a reason; never
// silently read otherwise.
func TestHTCondorCorpus(t *testing.T) {
	py := os.Getenv("SITEBOX_PYTHON")
	if py == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SITEBOX_PYTHON is not set: the corpus needs HTCondor's parser (the htcondor bindings)")
		}
		t.Skip("SITEBOX_PYTHON is not set")
	}
	if out, err := exec.Command(py, "-c", "import htcondor2").CombinedOutput(); err != nil {
		t.Fatalf("%s has no htcondor bindings (scripts/setup.sh installs them): %v: %s", py, err, out)
	}
	// getenv never copies sitebox's own token (a difference kept on
	// purpose); the corpus is read without one.
	t.Setenv("BEARER_TOKEN", "")
	os.Unsetenv("BEARER_TOKEN")
	files, _ := filepath.Glob("testdata/htcondor/*.sub")
	if len(files) < 40 {
		t.Fatalf("the corpus has %d submit files, want at least 40", len(files))
	}
	identical, refused := 0, 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(py, "testdata/htcondor/condor_read.py", f).Output()
			if err != nil {
				t.Fatalf("condor_read.py: %v", err)
			}
			var condor struct {
				Procs []condorProc
				Error string
			}
			if err := json.Unmarshal(out, &condor); err != nil {
				t.Fatalf("condor_read.py printed %q: %v", out, err)
			}
			specs, err := ParseFileFor(f, data, corpusTarget)
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || len(pe.Problems) == 0 {
					t.Fatalf("refused without a named problem: %v", err)
				}
				for _, p := range pe.Problems {
					if p.Msg == "" {
						t.Errorf("a problem without a reason: %+v", p)
					}
				}
				refused++
				t.Logf("refused (HTCondor: %s): %v", orOK(condor.Error), err)
				return
			}
			if condor.Error != "" {
				t.Fatalf("HTCondor refuses it (%s); the box read it as %d job(s)", condor.Error, len(specs))
			}
			if len(specs) != len(condor.Procs) {
				t.Fatalf("%d procs, HTCondor %d", len(specs), len(condor.Procs))
			}
			for i, sp := range specs {
				sameRandom(data, &sp, &condor.Procs[i])
				if d := diffProc(sp, condor.Procs[i]); d != "" {
					t.Errorf("proc %d: %s", i, d)
				}
			}
			identical++
		})
	}
	t.Logf("%d files: %d read as HTCondor reads them, %d refused with a reason", len(files), identical, refused)
	if identical < len(files)/2 {
		t.Errorf("only %d of %d files are read as HTCondor reads them", identical, len(files))
	}
}

// corpusTarget is a box whose only domain, local, advertises what a
// Debian 12 box does: no container runtime.
var corpusTarget = Target{Attrs: map[string]map[string]any{
	"local": {"OpSys": "LINUX", "Arch": "X86_64", "Cpus": 2, "Memory": 4096, "HasSingularity": false},
}}

var randomCall = regexp.MustCompile(`\$RANDOM_INTEGER\(\s*(-?\d+)\s*,\s*(-?\d+)\s*(?:,\s*(\d+)\s*)?\)`)

// sameRandom compares $RANDOM_INTEGER's values by shape: an argument
// that is a whole number in the file's range and step, in both readings,
// counts as the same.
func sameRandom(data []byte, sp *Spec, c *condorProc) {
	m := randomCall.FindSubmatch(data)
	if m == nil {
		return
	}
	lo, _ := strconv.Atoi(string(m[1]))
	hi, _ := strconv.Atoi(string(m[2]))
	step := 1
	if len(m[3]) > 0 {
		step, _ = strconv.Atoi(string(m[3]))
	}
	norm := func(args []string) {
		for i, a := range args {
			if n, err := strconv.Atoi(a); err == nil && n >= lo && n <= hi && (n-lo)%step == 0 {
				args[i] = "<random>"
			}
		}
	}
	norm(sp.Arguments)
	norm(c.Arguments)
}

func orOK(s string) string {
	if s == "" {
		return "accepts it"
	}
	return s
}

// diffProc says how the box's reading of a proc differs from HTCondor's.
func diffProc(sp Spec, c condorProc) string {
	cluster := strings.NewReplacer("$(Cluster)", "1")
	args := make([]string, len(sp.Arguments))
	for i, a := range sp.Arguments {
		args[i] = cluster.Replace(a)
	}
	env := map[string]string{}
	for k, v := range sp.Env {
		env[k] = cluster.Replace(v)
	}
	if c.Environment == nil {
		c.Environment = map[string]string{}
	}
	if c.Arguments == nil {
		c.Arguments = []string{}
	}
	var d []string
	if exe := cluster.Replace(sp.Executable); exe != c.Executable {
		d = append(d, fmt.Sprintf("executable %q, HTCondor %q", exe, c.Executable))
	}
	if !reflect.DeepEqual(args, c.Arguments) {
		d = append(d, fmt.Sprintf("arguments %q, HTCondor %q", args, c.Arguments))
	}
	if !reflect.DeepEqual(env, c.Environment) {
		d = append(d, fmt.Sprintf("environment %q, HTCondor %q", env, c.Environment))
	}
	if sp.CPUs != c.CPUs || sp.MemoryMB != c.MemoryMB || sp.DiskMB != c.DiskMB {
		d = append(d, fmt.Sprintf("resources cpus=%d memory=%dMB disk=%dMB, HTCondor cpus=%d memory=%dMB disk=%dMB",
			sp.CPUs, sp.MemoryMB, sp.DiskMB, c.CPUs, c.MemoryMB, c.DiskMB))
	}
	return strings.Join(d, "; ")
}

// Macro functions as HTCondor evaluates them, or refused by name.
func TestSubmitMacroFunctions(t *testing.T) {
	t.Setenv("SBX_TEST_DIR", "/data/x")
	specs, err := ParseFile("f.sub", []byte("n = 7\nexecutable = /bin/echo\narguments = $ENV(SBX_TEST_DIR) f_$INT(Process,%03d) $INT(n,%02d) $REAL(Process,%.1f)\nqueue 2\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(specs[1].Arguments, " "); got != "/data/x f_001 07 1.0" {
		t.Errorf("proc 1 arguments %q", got)
	}
	for _, bad := range []string{"arguments = $RANDOM_INTEGER(9, 1)", "arguments = $CHOICE(5, a, b)", "arguments = $INT(Process,%s)", "arguments = $INT(Cluster)", `arguments = say "hi"`} {
		if _, err := ParseFile("f.sub", []byte("executable = /bin/echo\n"+bad+"\nqueue\n"), nil); err == nil || !strings.Contains(err.Error(), "f.sub:2:") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// +DESIRED_Sites names grid sites: the job may run in the domains that
// serve them (a domain's own name still works); an unserved site is
// refused by name.
func TestDesiredSitesMapToDomains(t *testing.T) {
	known := func(d string) bool { return d == "local" || d == "site" || d == "region" }
	sites := func(s string) []string {
		return map[string][]string{"T3_US_Box": {"local", "site"}, "T2_US_MIT": {"region"}}[s]
	}
	specs, err := ParseFileSites("f.sub", []byte("executable = /bin/true\n+DESIRED_Sites = \"T2_US_MIT,T3_US_Box\"\nqueue\n"), known, sites)
	if err != nil || strings.Join(specs[0].Domains, ",") != "region,local,site" {
		t.Errorf("domains %v, %v", specs, err)
	}
	_, err = ParseFileSites("f.sub", []byte("executable = /bin/true\n+DESIRED_Sites = \"T1_XX_Nowhere\"\nqueue\n"), known, sites)
	if err == nil || !strings.Contains(err.Error(), `site "T1_XX_Nowhere" is served by none`) {
		t.Errorf("an unserved site: %v", err)
	}
}
