package spec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func parseSub(t *testing.T, tgt Target, lines ...string) ([]Spec, error) {
	t.Helper()
	return ParseFileFor("f.sub", []byte(strings.Join(lines, "\n")+"\n"), tgt)
}

// initialdir is per proc; local inputs are read from it.
func TestSubmitInitialDir(t *testing.T) {
	specs, err := parseSub(t, Target{}, "executable = /bin/cat", "initialdir = run_$(Process)",
		"transfer_input_files = in.txt, /abs/x", "queue 2")
	if err != nil {
		t.Fatal(err)
	}
	sp := specs[1]
	if sp.InitialDir != "run_1" || sp.Inputs[0].From != "file:run_1/in.txt" || sp.Inputs[0].As != "in.txt" || sp.Inputs[1].From != "/abs/x" {
		t.Errorf("proc 1: initialdir %q, inputs %+v", sp.InitialDir, sp.Inputs)
	}
}

// Requirements keep the domains that meet them, Rank orders them, and a
// requirement none meets is refused naming each domain's attributes.
func TestSubmitRequirementsRank(t *testing.T) {
	tgt := Target{Attrs: map[string]map[string]any{
		"local": {"OpSys": "LINUX", "Memory": 4000.0, "Cpus": 2.0},
		"slurm": {"OpSys": "LINUX", "Memory": 64000.0, "Cpus": 32.0},
		"box2":  {"OpSys": "LINUX", "Memory": 16000.0, "Cpus": 8.0},
	}}
	specs, err := parseSub(t, tgt, "executable = /bin/true", `+Domains = "local,slurm,box2"`,
		"request_memory = 8GB", "requirements = TARGET.Memory >= RequestMemory && OpSys == \"linux\"", "rank = Cpus", "queue")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(specs[0].Domains, ","); got != "slurm,box2" {
		t.Errorf("domains %s, want slurm,box2", got)
	}
	_, err = parseSub(t, tgt, "executable = /bin/true", "requirements = Cpus > 100", "queue")
	if err == nil || !strings.Contains(err.Error(), "f.sub:2: requirements: no domain of the job can run it: local does not meet Requirements (it has OpSys=\"LINUX\" Cpus=2 Memory=4000)") {
		t.Errorf("unmet: %v", err)
	}
	for _, bad := range []string{"requirements = OpSysAndVer == \"AlmaLinux9\"", "requirements = (Memory > 1", "rank = Disk", "requirements = Memory $ 2"} {
		if _, err := parseSub(t, tgt, "executable = /bin/true", bad, "queue"); err == nil || !strings.Contains(err.Error(), "f.sub:2:") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// A container job goes only to domains with a runtime, else is refused
// naming the missing runtime.
func TestSubmitContainer(t *testing.T) {
	with := Target{Attrs: map[string]map[string]any{"local": {"HasSingularity": true}, "slurm": {}}}
	specs, err := parseSub(t, with, "executable = /bin/true", `+Domains = "slurm,local"`, `+SingularityImage = "/cvmfs/img:9"`, "queue")
	if err != nil || specs[0].Container != "/cvmfs/img:9" || strings.Join(specs[0].Domains, ",") != "local" {
		t.Fatalf("%+v, %v", specs, err)
	}
	_, err = parseSub(t, Target{}, "universe = docker", "docker_image = almalinux:9", "executable = /bin/true", "queue")
	if err == nil || !strings.Contains(err.Error(), "f.sub:2: docker_image: container jobs run in apptainer") || !strings.Contains(err.Error(), "apptainer is not installed") {
		t.Errorf("no runtime: %v", err)
	}
}

// $RANDOM_INTEGER is drawn per proc within its range and step.
func TestSubmitRandomInteger(t *testing.T) {
	specs, err := parseSub(t, Target{}, "executable = /bin/echo", "arguments = $RANDOM_INTEGER(10, 20, 5)", "queue 50")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, sp := range specs {
		n, err := strconv.Atoi(sp.Arguments[0])
		if err != nil || n < 10 || n > 20 || n%5 != 0 {
			t.Fatalf("argument %q", sp.Arguments[0])
		}
		seen[sp.Arguments[0]] = true
	}
	if len(seen) < 2 {
		t.Errorf("50 procs drew only %v", seen)
	}
}

// Several queue statements queue what is set so far, later values
// overriding; $(Process) counts on across them.
func TestSubmitSeveralQueues(t *testing.T) {
	specs, err := parseSub(t, Target{}, "executable = /bin/echo", "arguments = a $(Process)", "queue 2",
		"arguments = b $(Item)", "queue Item in (x, y)")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range specs {
		got = append(got, strings.Join(sp.Arguments, " "))
	}
	if strings.Join(got, "|") != "a 0|a 1|b x|b y" {
		t.Errorf("procs %q", got)
	}
}

// include reads a file; include command is refused; an include loop
// stops; if/elif/else choose.
func TestSubmitIncludeAndConditionals(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile(filepath.Join(dir, "common.inc"), []byte("request_cpus = 3\nif defined FAST\narguments = fast\nelse\narguments = slow\nendif\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "loop.inc"), []byte("include : loop.inc\n"), 0o644)
	specs, err := parseSub(t, Target{}, "executable = /bin/echo", "FAST = 1", "include : common.inc", "queue")
	if err != nil || specs[0].CPUs != 3 || strings.Join(specs[0].Arguments, " ") != "fast" {
		t.Fatalf("%+v, %v", specs, err)
	}
	for _, c := range []struct{ line, want string }{
		{"include command : touch pwned", "include command is refused"},
		{"include : loop.inc", "includes nest deeper than"},
		{"include : missing.inc", "no such file"},
		{"if $(x) > 2", "not a condition HTCondor's submit parser evaluates"},
		{"endif", "endif without an if"},
	} {
		_, err := parseSub(t, Target{}, "executable = /bin/echo", c.line, "queue")
		if err == nil || !strings.Contains(err.Error(), "f.sub:2:") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.line, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("include command ran its command")
	}
}

// getenv takes the submitter's variables (all, or by name and pattern);
// environment overrides them.
func TestSubmitGetenv(t *testing.T) {
	t.Setenv("SBX_A", "1")
	t.Setenv("SBX_B", "2")
	t.Setenv("OTHER_SBX", "3")
	t.Setenv("BEARER_TOKEN", "secret")
	specs, err := parseSub(t, Target{}, "executable = /bin/env", "getenv = sbx_*", `environment = "SBX_B=override"`, "queue")
	if err != nil {
		t.Fatal(err)
	}
	env := specs[0].Env
	if env["SBX_A"] != "1" || env["SBX_B"] != "override" || env["OTHER_SBX"] != "" {
		t.Errorf("env %v", env)
	}
	specs, _ = parseSub(t, Target{}, "executable = /bin/env", "getenv = true", "queue")
	if specs[0].Env["SBX_A"] != "1" || hasKey(specs[0].Env, "BEARER_TOKEN") {
		t.Errorf("getenv = true: SBX_A %q, BEARER_TOKEN copied: %v", specs[0].Env["SBX_A"], hasKey(specs[0].Env, "BEARER_TOKEN"))
	}
	specs, _ = parseSub(t, Target{}, "executable = /bin/env", "getenv = false", "queue")
	if len(specs[0].Env) != 0 {
		t.Errorf("getenv = false took %v", specs[0].Env)
	}
}

// A macro set before one queue statement and used after a later one is
// a macro, not an unknown key.
func TestSubmitMacroAcrossQueues(t *testing.T) {
	specs, err := parseSub(t, Target{}, "executable = /bin/echo", "x = 5", "queue", "arguments = $(x)", "queue", "include\t: /nonexistent-is-fine-with-ifexist")
	if err == nil || !strings.Contains(err.Error(), "f.sub:6: include") {
		t.Errorf("an include after a tab: %v", err)
	}
	specs, err = parseSub(t, Target{}, "executable = /bin/echo", "x = 5", "queue", "arguments = $(x)", "queue")
	if err != nil || len(specs) != 2 || len(specs[0].Arguments) != 0 || specs[1].Arguments[0] != "5" {
		t.Errorf("%+v, %v", specs, err)
	}
}
