package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// TOML job files keep every key in a [job] table:
//
//	[job]
//	executable = "/opt/sim/run"
//	arguments = ["-n", "3", "--seed", "$(Process)"]
//	env = { OMP_NUM_THREADS = "2" }   # or ["NAME=value", ...]
//	cpus = 2
//	memory = "2GiB"                   # or a number of MB
//	disk = "10GiB"                    # or a number of MB
//	wall_time = "2h"                  # or seconds
//	inputs = ["/store/mc/a.root", { from = "root://host//store/b", as = "b.root" }, "local.cfg"]
//	outputs = ["out.root"]
//	output_destination = "root://host//store/user/me/"
//	stdout = "out.txt"
//	stderr = "err.txt"
//	domains = ["local", "slurm"]
//	backfill = false
//	queue = 10
//
// Sizes follow sitebox's units (GiB = 2^30, GB = 10^9), not HTCondor's.

// tomlJobKeys are the keys of [job], for unknown-key suggestions.
// Read-only.
var tomlJobKeys = []string{
	"executable", "arguments", "env", "cpus", "memory", "disk", "wall_time",
	"inputs", "outputs", "output_destination", "stdout", "stderr", "domains",
	"backfill", "queue",
}

func parseTOMLJob(data []byte, known func(string) bool, ps *specProblems) specDraft {
	lines, clean, ok := walkTOMLJob(data, ps)
	if !ok {
		return specDraft{}
	}
	var m map[string]any
	if err := toml.Unmarshal(clean, &m); err != nil {
		var de *toml.DecodeError
		line, key := 0, ""
		if errors.As(err, &de) {
			line, _ = de.Position()
			key = strings.TrimPrefix(strings.Join(de.Key(), "."), "job.")
		}
		ps.add(line, key, "%s", strings.TrimPrefix(err.Error(), "toml: "))
		return specDraft{}
	}
	job, ok := m["job"].(map[string]any)
	if !ok {
		if _, has := m["job"]; has {
			ps.add(lines["job"], "job", "must be a table ([job])")
		} else {
			ps.add(0, "job", "no [job] table: a TOML job file puts its keys under [job]")
		}
		return specDraft{}
	}
	r := &tomlJobReader{ps: ps, lines: lines, job: job, known: known}
	return r.read()
}

// walkTOMLJob finds what the decoder stops at or ignores — syntax errors,
// unknown keys, every duplicate — and the line of each key. The decoder
// refuses duplicates outright, so clean is data with repeated key-values
// blanked (to spaces, keeping line numbers) to let it check the rest; ok
// is false when nothing more can be checked.
func walkTOMLJob(data []byte, ps *specProblems) (lines map[string]int, clean []byte, ok bool) {
	lines, clean, ok = map[string]int{}, bytes.Clone(data), true
	var p unstable.Parser
	p.Reset(data)
	table, arrays := "", map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			name, line := tomlKey(e.Key()), tomlLine(&p, e)
			if !isTOMLJobTable(name) {
				ps.add(line, "["+name+"]", "%s", unknownMsg("table", name, []string{"job", "job.env", "job.inputs"}))
			}
			table = name
			if e.Kind == unstable.ArrayTable {
				arrays[name]++
				table = fmt.Sprintf("%s[%d]", name, arrays[name])
			} else if first, dup := lines[name]; dup {
				ps.add(line, "["+name+"]", "duplicate table (first on line %d)", first)
				ok = false
			}
			lines[table] = line
		case unstable.KeyValue:
			it := e.Key()
			k := tomlKey(it)
			it = e.Key()
			it.Next()
			line := tomlLine(&p, it.Node())
			full := k
			if table != "" {
				full = table + "." + k
			}
			if first, dup := lines[full]; dup {
				ps.add(line, strings.TrimPrefix(full, "job."), "duplicate key (first set on line %d)", first)
				if !blankTOMLRange(clean, e.Raw) {
					ok = false
				}
				continue
			}
			lines[full] = line
			switch {
			case table == "" && full != "job" && !strings.HasPrefix(full, "job."):
				ps.add(line, k, "set outside the [job] table (put a [job] line above it)")
			case strings.HasPrefix(full, "job.") && !isTOMLJobTable(full):
				ps.add(line, strings.TrimPrefix(full, "job."), "%s", unknownMsg("key", tomlField(full), tomlJobKeys))
			}
		}
	}
	if err := p.Error(); err != nil {
		var pe *unstable.ParserError
		line := 0
		if errors.As(err, &pe) {
			line = p.Shape(p.Range(pe.Highlight)).Start.Line
		}
		ps.add(line, "", "TOML syntax error: %v", err)
		return nil, nil, false
	}
	return lines, clean, ok
}

// isTOMLJobTable reports whether a table or key path is [job] or lies
// under one of its known keys (their contents are checked on decoding).
func isTOMLJobTable(name string) bool {
	if name == "job" {
		return true
	}
	if !strings.HasPrefix(name, "job.") {
		return false
	}
	return slices.Contains(tomlJobKeys, tomlField(name))
}

// tomlField is the [job] key a path is under: "job.env.X" → "env".
func tomlField(path string) string {
	f := strings.TrimPrefix(path, "job.")
	if i := strings.IndexAny(f, ".["); i >= 0 {
		f = f[:i]
	}
	return f
}

func blankTOMLRange(b []byte, r unstable.Range) bool {
	end := int(r.Offset) + int(r.Length)
	if r.Length == 0 || end > len(b) {
		return false
	}
	for i := int(r.Offset); i < end; i++ {
		if b[i] != '\n' && b[i] != '\r' {
			b[i] = ' '
		}
	}
	return true
}

func tomlKey(it unstable.Iterator) string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, ".")
}

// tomlLine is the line a node starts on; containers have no text of
// their own, so their first child's is used.
func tomlLine(p *unstable.Parser, n *unstable.Node) int {
	if n == nil {
		return 0
	}
	if n.Raw.Length == 0 {
		return tomlLine(p, n.Child())
	}
	return p.Shape(n.Raw).Start.Line
}

// tomlJobReader turns the decoded [job] table into a Spec, reporting
// every value of the wrong type or out of range at its line.
type tomlJobReader struct {
	ps    *specProblems
	lines map[string]int
	job   map[string]any
	known func(string) bool
}

// line finds the line of key under [job], or of its closest parent.
func (r *tomlJobReader) line(key string) int {
	for k := "job." + key; ; {
		if l, ok := r.lines[k]; ok {
			return l
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			return 0
		}
		k = k[:i]
	}
}

func (r *tomlJobReader) bad(key, format string, args ...any) {
	r.ps.add(r.line(key), key, format, args...)
}

func (r *tomlJobReader) read() specDraft {
	d := specDraft{queue: 1}
	s := &d.spec
	if v, ok := r.str("executable"); !ok {
		if _, set := r.job["executable"]; !set {
			r.ps.add(r.lines["job"], "executable", "missing: every job needs one")
		}
	} else if v == "" {
		r.bad("executable", "is empty")
	} else {
		s.Executable = v
	}
	if v, ok := r.job["arguments"].(string); ok {
		r.bad("arguments", `must be an array of strings like ["-n", "3"], not %q`, v)
	} else {
		s.Arguments, _ = r.strList("arguments")
	}
	s.Env = r.env()
	if n, ok := r.int("cpus"); ok {
		if n < 1 || n > math.MaxInt32 {
			r.bad("cpus", "must be at least 1, not %d", n)
		} else {
			s.CPUs = int(n)
		}
	}
	s.MemoryMB = r.size("memory")
	s.DiskMB = r.size("disk")
	s.WallTime = r.wallTime()
	s.Inputs = r.inputs()
	if outs, ok := r.strList("outputs"); ok {
		for _, o := range outs {
			if msg := SandboxPathProblem(o); msg != "" {
				r.bad("outputs", "%s", msg)
			}
		}
		s.Outputs = outs
	}
	if v, ok := r.str("output_destination"); ok {
		if msg := CheckDestination(v); msg != "" {
			r.bad("output_destination", "%s", msg)
		}
		s.OutputDestination = v
	}
	for key, dst := range map[string]*string{"stdout": &s.Stdout, "stderr": &s.Stderr} {
		if v, ok := r.str(key); ok {
			if msg := SandboxPathProblem(v); msg != "" {
				r.bad(key, "%s", msg)
			}
			*dst = v
		}
	}
	if ds, ok := r.strList("domains"); ok {
		for _, msg := range checkDomains(ds, r.known) {
			r.bad("domains", "%s", msg)
		}
		s.Domains = ds
	}
	if v, ok := r.job["backfill"]; ok {
		if b, isBool := v.(bool); isBool {
			s.Backfill = b
		} else {
			r.bad("backfill", "must be true or false, not %s", tomlShow(v))
		}
	}
	if n, ok := r.int("queue"); ok {
		if msg := checkQueueCount(n); msg != "" {
			r.bad("queue", "%s", msg)
		} else {
			d.queue = int(n)
		}
	}
	return d
}
