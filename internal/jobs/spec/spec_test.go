package spec

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// specLines joins lines into a file, so a case's line numbers can be
// counted from its source.
func specLines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

func knownDomains(names ...string) func(string) bool {
	return func(d string) bool {
		for _, n := range names {
			if n == d {
				return true
			}
		}
		return false
	}
}

// condorExample is written the way HTCondor's manual writes submit files.
var condorExample = specLines(
	"# Simulation, three seeds",
	"Universe   = vanilla",
	"Executable = /opt/sim/run",
	`Arguments  = "-n 3 'a b' --out out_$(Process).txt"`,
	`Environment = "A=1 B='x y' SEED=$(Process)"`,
	"request_cpus   = 2",
	"request_memory = 2GB",
	"request_disk   = 1000000",
	"transfer_input_files = root://xrd.example.org//store/a.root, /store/mc/b.root, \\",
	"    cfg/local.cfg, https://h.example.org/x_$(ProcId).dat",
	"transfer_output_files = out_$(Process).txt",
	"output_destination = root://xrd.example.org//store/user/me/",
	"should_transfer_files = YES",
	"when_to_transfer_output = ON_EXIT",
	"output = job.$(Cluster).$(Process).out",
	"error  = job.$(ClusterId).$(Process).err",
	"log    = job.log",
	`+Domains = "local,slurm"`,
	"+Backfill = true",
	"+MaxWallTime = 7200",
	"queue 3",
)

func condorExampleSpec(p int) Spec {
	n := string(rune('0' + p))
	return Spec{
		Executable: "/opt/sim/run",
		Arguments:  []string{"-n", "3", "a b", "--out", "out_" + n + ".txt"},
		Env:        map[string]string{"A": "1", "B": "x y", "SEED": n},
		CPUs:       2,
		MemoryMB:   2048,
		DiskMB:     977, // 1000000 KiB, rounded up to whole MiB
		WallTime:   2 * time.Hour,
		Inputs: []Input{
			{From: "root://xrd.example.org//store/a.root"},
			{From: "/store/mc/b.root"},
			{From: "file:cfg/local.cfg"},
			{From: "https://h.example.org/x_" + n + ".dat"},
		},
		Outputs:           []string{"out_" + n + ".txt"},
		OutputDestination: "root://xrd.example.org//store/user/me/",
		Stdout:            "job.$(Cluster)." + n + ".out",
		Stderr:            "job.$(Cluster)." + n + ".err",
		Domains:           []string{"local", "slurm"},
		Backfill:          true,
		Process:           p,
	}
}

// defaults is a job that set only its executable.
func defaults(exe string, args ...string) Spec {
	return Spec{Executable: exe, Arguments: args, CPUs: 1, MemoryMB: 1024,
		Stdout: "stdout", Stderr: "stderr", Domains: []string{"local"}}
}

func TestParseValid(t *testing.T) {
	with := func(s Spec, f func(*Spec)) Spec { f(&s); return s }
	for _, tc := range []struct {
		name, file string
		text       []byte
		want       []Spec
	}{
		{"condor example, queue 3", "sim.sub", condorExample,
			[]Spec{condorExampleSpec(0), condorExampleSpec(1), condorExampleSpec(2)}},
		{"condor minimal gets defaults", "a.sub", specLines("executable = /bin/echo", "queue"),
			[]Spec{defaults("/bin/echo")}},
		{"condor old-syntax arguments and environment", "a.sub", specLines(
			"executable = /bin/echo", `arguments = -n 3 say\"hi`, "environment = A=1; B=x y;", "queue 1"),
			[]Spec{with(defaults("/bin/echo", "-n", "3", `say"hi`), func(s *Spec) { s.Env = map[string]string{"A": "1", "B": "x y"} })}},
		{"condor doubled quotes", "a.sub", specLines(
			"executable = /bin/echo", `arguments = "one ""two"" 'it''s' ''"`, "queue"),
			[]Spec{defaults("/bin/echo", "one", `"two"`, "it's", "")}},
		{"condor continuation and case", "a.sub", specLines(
			"EXECUTABLE = /bin/echo", `ARGUMENTS = "a \`, `   b"`, "Request_Memory = 1G", "QUEUE"),
			[]Spec{with(defaults("/bin/echo", "a", "b"), func(s *Spec) { s.MemoryMB = 1024 })}},
		{"condor units", "a.sub", specLines(
			"executable = /bin/echo", "request_memory = 512 MB", "request_disk = 4GB", "queue"),
			[]Spec{with(defaults("/bin/echo"), func(s *Spec) { s.MemoryMB, s.DiskMB = 512, 4096 })}},
		{"condor user macros", "a.sub", specLines(
			"base = /data/run", "file = $(base)_$(Process).txt",
			"executable = /bin/cat", "arguments = $(file)", "queue 2"),
			[]Spec{
				with(defaults("/bin/cat", "/data/run_0.txt"), func(s *Spec) {}),
				with(defaults("/bin/cat", "/data/run_1.txt"), func(s *Spec) { s.Process = 1 }),
			}},
		{"condor DESIRED_Sites and MY. form", "a.sub", specLines(
			"executable = /bin/echo", `+DESIRED_Sites = "site, local"`, "MY.WallTime = 60", "queue"),
			[]Spec{with(defaults("/bin/echo"), func(s *Spec) { s.Domains, s.WallTime = []string{"site", "local"}, time.Minute })}},
		{"toml by extension", "job.toml", specLines(
			"[job]",
			`executable = "/opt/sim/run"`,
			`arguments = ["-n", "3", "$(Process)"]`,
			`env = { OMP_NUM_THREADS = 2, MODE = "fast" }`,
			"cpus = 2",
			`memory = "2GiB"`,
			"disk = 500",
			`wall_time = "90m"`,
			`inputs = ["/store/a.root", { from = "root://h//store/b", as = "b.root" }, "local.cfg"]`,
			`outputs = ["out.root"]`,
			`output_destination = "root://h//store/user/me/"`,
			`stdout = "out.$(Cluster).txt"`,
			`domains = ["slurm", "local"]`,
			"backfill = true",
			"queue = 2"),
			func() []Spec {
				mk := func(p int, n string) Spec {
					return Spec{Executable: "/opt/sim/run", Arguments: []string{"-n", "3", n},
						Env:  map[string]string{"OMP_NUM_THREADS": "2", "MODE": "fast"},
						CPUs: 2, MemoryMB: 2048, DiskMB: 500, WallTime: 90 * time.Minute,
						Inputs:  []Input{{From: "/store/a.root"}, {From: "root://h//store/b", As: "b.root"}, {From: "file:local.cfg"}},
						Outputs: []string{"out.root"}, OutputDestination: "root://h//store/user/me/",
						Stdout: "out.$(Cluster).txt", Stderr: "stderr", Domains: []string{"slurm", "local"},
						Backfill: true, Process: p}
				}
				return []Spec{mk(0, "0"), mk(1, "1")}
			}()},
		{"toml by [job] content, defaults", "job.sub", specLines(
			"# a TOML job", "[job]", `executable = "/bin/echo"`),
			[]Spec{defaults("/bin/echo")}},
		{"toml array tables and env array", "j", specLines(
			"[job]", `executable = "/bin/echo"`, `env = ["A=1", "B=2=3"]`, `memory = 100`,
			"[[job.inputs]]", `from = "/store/x"`, "[[job.inputs]]", `from = "y.txt"`, `as = "in/y.txt"`),
			[]Spec{with(defaults("/bin/echo"), func(s *Spec) {
				s.Env, s.MemoryMB = map[string]string{"A": "1", "B": "2=3"}, 100
				s.Inputs = []Input{{From: "/store/x"}, {From: "file:y.txt", As: "in/y.txt"}}
			})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFile(tc.file, tc.text, knownDomains("local", "slurm", "site"))
			if err != nil {
				t.Fatalf("unexpected error:\n%v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestParseProcessCopies checks that queued jobs share no slice or map:
// the server edits each job's strings in place.
func TestParseProcessCopies(t *testing.T) {
	specs, err := ParseFile("a.sub", condorExample, nil)
	if err != nil {
		t.Fatal(err)
	}
	specs[0].Arguments[0], specs[0].Env["A"], specs[0].Inputs[0].From, specs[0].Domains[0] = "x", "x", "x", "x"
	if !reflect.DeepEqual(specs[1], condorExampleSpec(1)) {
		t.Errorf("changing job 0 changed job 1: %+v", specs[1])
	}
}

type wantProblem struct {
	line       int
	key, words string
}

func TestParseErrors(t *testing.T) {
	exe := "executable = /bin/echo"
	for _, tc := range []struct {
		name, file string
		text       []byte
		want       []wantProblem
	}{
		// Submit files.
		{"unknown key suggests", "a.sub", specLines(exe, "request_cpu = 2", "queue"),
			[]wantProblem{{2, "request_cpu", `unknown key (did you mean "request_cpus"?)`}}},
		{"unknown + attribute suggests", "a.sub", specLines(exe, `+Domain = "local"`, "queue"),
			[]wantProblem{{2, "+Domain", `did you mean "+Domains"`}}},
		{"unknown key far from any", "a.sub", specLines(exe, "frobnicate = 2", "queue"),
			[]wantProblem{{2, "frobnicate", "unknown key"}}},
		{"zero cpus", "a.sub", specLines(exe, "request_cpus = 0", "queue"),
			[]wantProblem{{2, "request_cpus", "at least 1, not 0"}}},
		{"negative cpus", "a.sub", specLines(exe, "request_cpus = -4", "queue"),
			[]wantProblem{{2, "request_cpus", "at least 1, not -4"}}},
		{"non-numeric cpus", "a.sub", specLines(exe, "request_cpus = two", "queue"),
			[]wantProblem{{2, "request_cpus", `"two" is not a whole number`}}},
		{"bad memory unit", "a.sub", specLines(exe, "request_memory = 2XB", "queue"),
			[]wantProblem{{2, "request_memory", `"2XB" is not a size`}}},
		{"bad disk", "a.sub", specLines(exe, "request_disk = lots", "queue"),
			[]wantProblem{{2, "request_disk", `"lots" is not a size (a bare number is KiB`}}},
		{"zero memory", "a.sub", specLines(exe, "request_memory = 0", "queue"),
			[]wantProblem{{2, "request_memory", "must be more than 0"}}},
		{"missing executable", "a.sub", specLines("arguments = x", "queue"),
			[]wantProblem{{2, "executable", "missing"}}},
		{"unknown domain", "a.sub", specLines(exe, `+Domains = "local,mars"`, "queue"),
			[]wantProblem{{2, "+Domains", `unknown domain "mars"`}}},
		{"queue zero", "a.sub", specLines(exe, "queue 0"),
			[]wantProblem{{2, "queue", "not a positive integer"}}},
		{"queue negative", "a.sub", specLines(exe, "queue -3"),
			[]wantProblem{{2, "queue", "not a positive integer"}}},
		{"queue word", "a.sub", specLines(exe, "queue many"),
			[]wantProblem{{2, "queue", `"many" is not a positive integer`}}},
		{"queue too many", "a.sub", specLines(exe, "queue 10001"),
			[]wantProblem{{2, "queue", "more than 10000"}}},
		// queue … from and … in are supported (issue 15): a missing
		// file and an empty list are what is wrong with them now.
		{"queue from", "a.sub", specLines(exe, "queue 3 from list.txt"),
			[]wantProblem{{2, "queue", "queue from list.txt: open list.txt"}}},
		{"queue in", "a.sub", specLines(exe, "queue name in ()"),
			[]wantProblem{{2, "queue", "the item list is empty"}}},
		{"two queues and text after", "a.sub", specLines(exe, "queue", "queue 2", "output = x"),
			[]wantProblem{{4, "", "nothing may follow the last queue statement (line 3)"}}},
		{"no queue", "a.sub", specLines(exe),
			[]wantProblem{{0, "queue", "no queue statement"}}},
		{"malformed line", "a.sub", specLines(exe, "arguments -n 3", "queue"),
			[]wantProblem{{2, "", `malformed line "arguments -n 3": expected key = value`}}},
		{"unterminated double quote", "a.sub", specLines(exe, `arguments = "-n 3`, "queue"),
			[]wantProblem{{2, "arguments", "unterminated double quote"}}},
		{"unterminated single quote", "a.sub", specLines(exe, `arguments = "-n 'a b"`, "queue"),
			[]wantProblem{{2, "arguments", "unterminated single quote"}}},
		{"unterminated attribute string", "a.sub", specLines(exe, `+Domains = "local`, "queue"),
			[]wantProblem{{2, "+Domains", "unterminated double quote"}}},
		{"text after closing quote", "a.sub", specLines(exe, `arguments = "a" b`, "queue"),
			[]wantProblem{{2, "arguments", `unexpected "b" after the closing double quote`}}},
		{"environment entry without =", "a.sub", specLines(exe, `environment = "A=1 B"`, "queue"),
			[]wantProblem{{2, "environment", `entry "B" has no '='`}}},
		{"old environment entry without =", "a.sub", specLines(exe, "environment = A=1;B", "queue"),
			[]wantProblem{{2, "environment", `entry "B" has no '='`}}},
		{"duplicate key", "a.sub", specLines(exe, "output = a", "Executable = /bin/true", "queue"),
			[]wantProblem{{3, "Executable", "duplicate key (first set on line 1)"}}},
		{"universe", "a.sub", specLines(exe, "universe = vm", "queue"),
			[]wantProblem{{2, "universe", `"vm" is not supported`}}},
		{"docker without image", "a.sub", specLines(exe, "universe = docker", "queue"),
			[]wantProblem{{2, "universe", "universe docker needs an image"}}},
		{"domains twice", "a.sub", specLines(exe, `+Domains = "local"`, `+DESIRED_Sites = "site"`, "queue"),
			[]wantProblem{{3, "+DESIRED_Sites", "means the same as +Domains (line 2)"}}},
		{"unknown macro", "a.sub", specLines(exe, "arguments = $(seed)", "queue"),
			[]wantProblem{{2, "arguments", "unknown macro $(seed)"}}},
		{"macro loop", "a.sub", specLines(exe, "a = $(b)", "b = $(a)", "arguments = $(a)", "queue"),
			[]wantProblem{{2, "a", "nests too deep"}, {3, "b", "nests too deep"}, {4, "arguments", "nests too deep"}}},
		{"quoted executable", "a.sub", specLines(`executable = "/bin/echo"`, "queue"),
			[]wantProblem{{1, "executable", "quoted value"}}},
		{"getenv", "a.sub", specLines(exe, "getenv =", "queue"),
			[]wantProblem{{2, "getenv", "has no value"}}},
		{"input scheme", "a.sub", specLines(exe, "transfer_input_files = a, osdf:///x", "queue"),
			[]wantProblem{{2, "transfer_input_files", `URL scheme "osdf" is not supported`}}},
		{"output outside sandbox", "a.sub", specLines(exe, "transfer_output_files = ok, ../x, /etc/y", "queue"),
			[]wantProblem{{2, "transfer_output_files", "leaves the job's sandbox"}, {2, "transfer_output_files", "not an absolute path"}}},
		{"backfill", "a.sub", specLines(exe, "+Backfill = maybe", "queue"),
			[]wantProblem{{2, "+Backfill", "true or false"}}},
		{"wall time", "a.sub", specLines(exe, "+MaxWallTime = 2h", "queue"),
			[]wantProblem{{2, "+MaxWallTime", "not a whole number of seconds"}}},
		{"every problem of a file", "a.sub", specLines(
			"executabel = /bin/echo", "request_cpus = 0", "# fine", "request_memory = 2 lots", "queue 0"),
			[]wantProblem{
				{1, "executabel", `did you mean "executable"`}, {2, "request_cpus", "at least 1"},
				{4, "request_memory", "not a size"}, {5, "queue", "not a positive integer"}, {5, "executable", "missing"},
			}},
		// TOML files.
		{"toml unknown key suggests", "j.toml", specLines("[job]", `executable = "/bin/echo"`, "cpu = 2"),
			[]wantProblem{{3, "cpu", `unknown key (did you mean "cpus"?)`}}},
		{"toml unknown table", "j.toml", specLines("[jobs]", `executable = "/bin/echo"`),
			[]wantProblem{{1, "[jobs]", `unknown table (did you mean "job"?)`}, {0, "job", "no [job] table"}}},
		{"toml keys outside [job]", "j.toml", specLines(`executable = "/bin/echo"`),
			[]wantProblem{{1, "executable", "outside the [job] table"}, {0, "job", "no [job] table"}}},
		{"toml zero cpus", "j.toml", specLines("[job]", `executable = "/bin/echo"`, "cpus = 0"),
			[]wantProblem{{3, "cpus", "at least 1, not 0"}}},
		{"toml negative cpus", "j.toml", specLines("[job]", `executable = "/bin/echo"`, "cpus = -2"),
			[]wantProblem{{3, "cpus", "at least 1, not -2"}}},
		{"toml non-numeric cpus", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `cpus = "four"`),
			[]wantProblem{{3, "cpus", `must be a whole number, not "four"`}}},
		{"toml bad sizes", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `memory = "2XB"`, "disk = 1.5"),
			[]wantProblem{{3, "memory", `"2XB" is not a size`}, {4, "disk", "must be a size"}}},
		{"toml missing executable", "j.toml", specLines("# job", "[job]", "cpus = 1"),
			[]wantProblem{{2, "executable", "missing"}}},
		{"toml unknown domain", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `domains = ["local", "mars"]`),
			[]wantProblem{{3, "domains", `unknown domain "mars"`}}},
		{"toml queue", "j.toml", specLines("[job]", `executable = "/bin/echo"`, "queue = 10001"),
			[]wantProblem{{3, "queue", "more than 10000"}}},
		{"toml queue not integer", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `queue = "3"`),
			[]wantProblem{{3, "queue", "must be a whole number"}}},
		{"toml syntax error", "j.toml", specLines("[job]", `executable = "/bin/echo"`, "cpus = = 2"),
			[]wantProblem{{3, "", "TOML syntax error"}}},
		{"toml unterminated string", "j.toml", specLines("[job]", `executable = "/bin/echo`, "cpus = 2"),
			[]wantProblem{{2, "", "TOML syntax error"}}},
		{"toml duplicate keys, rest still checked", "j.toml", specLines(
			"[job]", `executable = "/bin/echo"`, "cpus = 2", "cpus = 3", `arguments = [`, `  "x"]`, `arguments = []`, "queue = 0"),
			[]wantProblem{{4, "cpus", "duplicate key (first set on line 3)"}, {7, "arguments", "duplicate key (first set on line 5)"}, {8, "queue", "not a positive integer"}}},
		{"toml env entry without =", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `env = ["A=1", "B"]`),
			[]wantProblem{{3, "env", `entry "B" has no '='`}}},
		{"toml env table", "j.toml", specLines("[job]", `executable = "/bin/echo"`, "[job.env]", "A = [1]"),
			[]wantProblem{{4, "env.A", "must be a string"}}},
		{"toml arguments string", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `arguments = "-n 3"`),
			[]wantProblem{{3, "arguments", "must be an array of strings"}}},
		{"toml wall time", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `wall_time = "2 hours"`),
			[]wantProblem{{3, "wall_time", "not a positive duration"}}},
		{"toml input table", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `inputs = [{ from = "x", size = 3 }, { as = "y" }]`),
			[]wantProblem{{3, "inputs", "item 1: size: unknown key"}, {3, "inputs", "item 2 has no source"}}},
		{"toml input array table", "j.toml", specLines("[job]", `executable = "/bin/echo"`, "[[job.inputs]]", `from = "x"`, `as = "../y"`),
			[]wantProblem{{3, "inputs[1]", "leaves the job's sandbox"}}},
		{"toml table redefined by decoder", "j.toml", specLines("[job]", `executable = "/bin/echo"`, `env = { A = "1" }`, "[job.env]", `B = "2"`),
			[]wantProblem{{4, "[job.env]", "duplicate table (first on line 3)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := ParseFile(tc.file, tc.text, knownDomains("local", "slurm", "site"))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, %v; want a *ParseError", specs, err)
			}
			if specs != nil {
				t.Errorf("got specs with an error: %v", specs)
			}
			if len(pe.Problems) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(pe.Problems), len(tc.want), err)
			}
			for i, w := range tc.want {
				p := pe.Problems[i]
				if p.Line != w.line || p.Key != w.key || !strings.Contains(p.Msg, w.words) {
					t.Errorf("problem %d = %d %q %q; want %d %q containing %q", i, p.Line, p.Key, p.Msg, w.line, w.key, w.words)
				}
			}
		})
	}
}

func TestParseErrorText(t *testing.T) {
	_, err := ParseFile("sim.sub", specLines("executable = /bin/echo", "request_cpus = x"), nil)
	want := "sim.sub:2: request_cpus: \"x\" is not a whole number\n" +
		"sim.sub: queue: no queue statement: a submit file ends with \"queue\" or \"queue N\" (a TOML job file needs a [job] table)"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

func TestParseDetectFormat(t *testing.T) {
	for _, tc := range []struct {
		name, file, text string
		toml             bool
	}{
		{"toml extension", "job.TOML", "executable = /bin/echo\nqueue\n", true},
		{"job table", "job", "# x\n[job]\n", true},
		{"array table", "job", "[[job.inputs]] # first\n", true},
		{"submit with quoted values", "job", "executable = /bin/echo\narguments = \"a b\"\n+Domains = \"local\"\nqueue\n", false},
		{"bracket on a continuation line", "job", "arguments = a \\\n [b]\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isTOMLJobFile(tc.file, []byte(tc.text)); got != tc.toml {
				t.Errorf("isTOMLJobFile = %v, want %v", got, tc.toml)
			}
		})
	}
}

func TestParseSizeMB(t *testing.T) {
	for _, tc := range []struct {
		in, bare string
		condor   bool
		want     int64
		ok       bool
	}{
		{"2048", "m", true, 2048, true},
		{"2GB", "m", true, 2048, true},
		{"2 gb", "m", true, 2048, true},
		{"1G", "m", true, 1024, true},
		{"512MB", "m", true, 512, true},
		{"1.5", "m", true, 2, true},
		{"1000", "k", true, 1, true},
		{"1048576", "k", true, 1024, true},
		{"2GiB", "m", false, 2048, true},
		{"2GB", "m", false, 1908, true}, // sitebox units: 2e9 bytes
		{"inf", "m", true, 0, false},
		{"-1", "m", true, 0, false},
		{"0", "m", true, 0, false},
		{"", "m", true, 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, msg := sizeMB(tc.in, tc.bare, tc.condor)
			if got != tc.want || (msg == "") != tc.ok {
				t.Errorf("sizeMB(%q) = %d, %q; want %d ok=%v", tc.in, got, msg, tc.want, tc.ok)
			}
		})
	}
}

// FuzzParseJobFile checks that no input crashes the parser and that every
// failure is a *ParseError whose problems all carry a message.
func FuzzParseJobFile(f *testing.F) {
	f.Add("a.sub", string(condorExample))
	f.Add("j.toml", "[job]\nexecutable = \"/bin/echo\"\nenv = [\"A\"]\nqueue = 2\n")
	f.Add("a.sub", "a = $(b)$(b)$(b)\nb = $(a)\narguments = \"x 'y\"\nqueue 3 \\\n")
	f.Fuzz(func(t *testing.T, name, text string) {
		specs, err := ParseFile(name, []byte(text), nil)
		var pe *ParseError
		switch {
		case err == nil && len(specs) == 0:
			t.Fatal("no error and no job")
		case err != nil && !errors.As(err, &pe):
			t.Fatalf("error is %T, not *ParseError", err)
		case err != nil:
			for _, p := range pe.Problems {
				if p.Msg == "" || p.Line < 0 {
					t.Fatalf("bad problem %+v", p)
				}
			}
		}
	})
}
