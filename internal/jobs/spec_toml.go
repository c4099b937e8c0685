package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

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
	f := tomlField(name)
	for _, k := range tomlJobKeys {
		if f == k {
			return true
		}
	}
	return false
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
			if msg := checkSandboxPath(o); msg != "" {
				r.bad("outputs", "%s", msg)
			}
		}
		s.Outputs = outs
	}
	if v, ok := r.str("output_destination"); ok {
		if msg := checkDestination(v); msg != "" {
			r.bad("output_destination", "%s", msg)
		}
		s.OutputDestination = v
	}
	for key, dst := range map[string]*string{"stdout": &s.Stdout, "stderr": &s.Stderr} {
		if v, ok := r.str(key); ok {
			if msg := checkSandboxPath(v); msg != "" {
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

// str returns a string key; ok is false when it is unset or not a string
// (reported).
func (r *tomlJobReader) str(key string) (string, bool) {
	v, set := r.job[key]
	if !set {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		r.bad(key, "must be a string, not %s", tomlShow(v))
	}
	return s, ok
}

func (r *tomlJobReader) strList(key string) ([]string, bool) {
	v, set := r.job[key]
	if !set {
		return nil, false
	}
	items, ok := v.([]any)
	if !ok {
		r.bad(key, "must be an array of strings, not %s", tomlShow(v))
		return nil, false
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if s, isStr := it.(string); isStr {
			out = append(out, s)
		} else {
			r.bad(key, "item %d must be a string, not %s", i+1, tomlShow(it))
			ok = false
		}
	}
	return out, ok
}

func (r *tomlJobReader) int(key string) (int64, bool) {
	v, set := r.job[key]
	if !set {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok {
		r.bad(key, "must be a whole number, not %s", tomlShow(v))
	}
	return n, ok
}

// size reads memory or disk: a number of MB or a size string.
func (r *tomlJobReader) size(key string) int64 {
	switch v := r.job[key].(type) {
	case nil:
	case int64:
		if v > 0 {
			return v
		}
		r.bad(key, "must be more than 0, not %d", v)
	case string:
		mb, msg := sizeMB(v, "m", false)
		if msg == "" {
			return mb
		}
		r.bad(key, `%s (e.g. "2GiB", "512MiB" or a number of MB)`, msg)
	default:
		r.bad(key, `must be a size like "2GiB" or a number of MB, not %s`, tomlShow(v))
	}
	return 0
}

func (r *tomlJobReader) wallTime() time.Duration {
	switch v := r.job["wall_time"].(type) {
	case nil:
	case int64:
		if v > 0 && v <= int64(math.MaxInt64/time.Second) {
			return time.Duration(v) * time.Second
		}
		r.bad("wall_time", "%d is not a positive number of seconds", v)
	case string:
		d, err := time.ParseDuration(v)
		if err == nil && d > 0 {
			return d
		}
		r.bad("wall_time", `%q is not a positive duration (e.g. "90m", "2h")`, v)
	default:
		r.bad("wall_time", `must be a duration like "2h" or seconds, not %s`, tomlShow(v))
	}
	return 0
}

// env reads a table of NAME = value, or an array of "NAME=value".
func (r *tomlJobReader) env() map[string]string {
	env := map[string]string{}
	switch v := r.job["env"].(type) {
	case nil:
		return nil
	case map[string]any:
		names := make([]string, 0, len(v))
		for n := range v {
			names = append(names, n)
		}
		sort.Strings(names) // problems in a stable order
		for _, n := range names {
			switch val := v[n].(type) {
			case string, int64, float64, bool:
				if msg := checkEnvName(n, env); msg != "" {
					r.bad("env."+n, "%s", msg)
				} else {
					env[n] = fmt.Sprint(val)
				}
			default:
				r.bad("env."+n, "must be a string, not %s", tomlShow(val))
			}
		}
	case []any:
		for i, it := range v {
			s, ok := it.(string)
			name, val, hasEq := strings.Cut(s, "=")
			switch {
			case !ok:
				r.bad("env", "item %d must be a string NAME=value, not %s", i+1, tomlShow(it))
			case !hasEq:
				r.bad("env", "environment entry %q has no '=' (write NAME=value)", s)
			case checkEnvName(name, env) != "":
				r.bad("env", "%s", checkEnvName(name, env))
			default:
				env[name] = val
			}
		}
	default:
		r.bad("env", `must be a table like { NAME = "value" }, not %s`, tomlShow(v))
	}
	return env
}

// inputs reads strings (a URL, a path or a local file) and tables
// { from = ..., as = ... }.
func (r *tomlJobReader) inputs() []Input {
	v, set := r.job["inputs"]
	if !set {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		r.bad("inputs", "must be an array, not %s", tomlShow(v))
		return nil
	}
	var out []Input
	for i, it := range items {
		// An array table [[job.inputs]] gives each item a line of its own.
		key := fmt.Sprintf("inputs[%d]", i+1)
		if _, own := r.lines["job."+key]; !own {
			key = "inputs"
		}
		from, as := "", ""
		switch x := it.(type) {
		case string:
			from = x
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // problems in a stable order
			for _, k := range keys {
				fv := x[k]
				s, isStr := fv.(string)
				switch {
				case k != "from" && k != "as":
					r.bad(key, "item %d: %s: %s", i+1, k, unknownMsg("key", k, []string{"from", "as"}))
				case !isStr:
					r.bad(key, "item %d: %s must be a string, not %s", i+1, k, tomlShow(fv))
				case k == "from":
					from = s
				default:
					as = s
				}
			}
		default:
			r.bad(key, `item %d must be a string or { from = "...", as = "..." }, not %s`, i+1, tomlShow(it))
			continue
		}
		if from == "" {
			r.bad(key, "item %d has no source (from)", i+1)
			continue
		}
		in, msg := classifyInput(from)
		if msg == "" && as != "" {
			msg = checkSandboxPath(as)
		}
		if msg != "" {
			r.bad(key, "item %d: %s", i+1, msg)
			continue
		}
		in.As = as
		out = append(out, in)
	}
	return out
}

// tomlShow prints a decoded value for a message.
func tomlShow(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", clipText(x))
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return clipText(fmt.Sprint(v))
}
