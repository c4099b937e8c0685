package spec

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"sitebox/internal/units"
)

// LocalInputPrefix marks an input that is a file on the submitting
// user's machine (a relative name in transfer_input_files or inputs),
// e.g. Input{From: "file:data/x.txt"}. The parser cannot read it — it
// only sees the job file's bytes — so the CLI strips the prefix, reads
// the name relative to its working directory (as condor_submit does with
// its default initialdir), puts the bytes in Input.Data and sets As to
// the base name when it is empty.
const LocalInputPrefix = "file:"

// Limits and defaults of a job file.
const (
	specMaxQueue        = 10000 // most jobs one "queue N" may make
	specDefaultCPUs     = 1
	specDefaultMemoryMB = 1024
)

// ParseFile reads a job file given to `sitebox submit` and returns one
// Spec per queued job (Process 0..N-1; Cluster 0, the server assigns it),
// with defaults applied: 1 CPU, 1024 MB, stdout "stdout", stderr
// "stderr", domains ["local"].
//
// The format is chosen so that no file is ambiguous: a name ending in
// ".toml", or any line that is a TOML table header ("[job]", "[job.env]",
// "[[job.inputs]]" — a submit file never has one), means TOML; anything
// else is an HTCondor submit file. Quoted values alone do not mean TOML:
// HTCondor's new-syntax arguments and +Attr strings are quoted too. A
// TOML-like file without [job] therefore fails as a submit file, with a
// hint to add the table.
//
// In every string field $(Process) and $(ProcId) become the job's
// process number; $(Cluster) and $(ClusterId) are written as
// "$(Cluster)", which the server replaces when it assigns the cluster.
//
// known reports whether a domain exists (nil accepts any). On bad input
// the error is a *ParseError naming every problem, and no Specs.
func ParseFile(name string, data []byte, known func(domain string) bool) ([]Spec, error) {
	return ParseFileSites(name, data, known, nil)
}

// ParseFileSites is ParseFile with sites mapping a grid site name to the
// domains that serve it, for +DESIRED_Sites (nil: no site is served).
func ParseFileSites(name string, data []byte, known func(domain string) bool, sites func(site string) []string) ([]Spec, error) {
	return ParseFileFor(name, data, Target{Known: known, Sites: sites})
}

// ParseFileFor is ParseFile against what the box offers (Target).
func ParseFileFor(name string, data []byte, t Target) ([]Spec, error) {
	if t.Known == nil {
		t.Known = func(string) bool { return true }
	}
	known := t.Known
	ps := &specProblems{}
	var d specDraft
	if isTOMLJobFile(name, data) {
		d = parseTOMLJob(data, known, ps)
	} else {
		d = parseSubmitFile(data, t, ps)
	}
	if len(ps.list) > 0 {
		// File-wide problems (line 0) read best after the numbered ones.
		sort.SliceStable(ps.list, func(i, j int) bool {
			li, lj := ps.list[i].Line, ps.list[j].Line
			return li != 0 && (lj == 0 || li < lj)
		})
		return nil, &ParseError{File: name, Problems: ps.list}
	}
	applySpecDefaults(&d.spec)
	specs := make([]Spec, d.queue)
	for i := range specs {
		var vars map[string]string
		if i < len(d.vars) {
			vars = d.vars[i]
		}
		base := d.spec
		if i < len(d.specs) {
			base = d.specs[i]
			applySpecDefaults(&base)
		}
		specs[i] = mapSpecStrings(base, processMacros(i, vars))
		specs[i].Process = i
	}
	return specs, nil
}

// specDraft is what a format parser made of a file: the job as written
// (process macros still in it) and how many copies to queue.
type specDraft struct {
	spec  Spec
	queue int
	// vars are each proc's queue-time macros besides Process (item
	// variables, Step, Row), lower-cased; nil for none.
	vars []map[string]string
	// specs are the procs read one by one (queue with items), each
	// with its values substituted; nil: every proc is spec.
	specs []Spec
}

// ParseError lists every problem of one job file, so that a user fixes
// them all in one round rather than one per submit.
type ParseError struct {
	File     string
	Problems []Problem
}

// Error prints one "file:line: key: message" line per problem.
func (e *ParseError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.File + ":" + p.String()
	}
	return strings.Join(lines, "\n")
}

// Problem is one thing wrong in a job file. Line is 1-based, 0 when the
// problem is the file as a whole (no queue statement); Key is the key as
// the file spells it, empty for a line that has none.
type Problem struct {
	Line int
	Key  string
	Msg  string
}

// String prints "line: key: message", leaving out what is missing.
func (p Problem) String() string {
	s := ""
	if p.Line > 0 {
		s = strconv.Itoa(p.Line) + ":"
	}
	if p.Key != "" {
		s += " " + p.Key + ":"
	}
	return s + " " + p.Msg
}

// specProblems collects problems while a parser goes on to find more.
type specProblems struct{ list []Problem }

func (ps *specProblems) add(line int, key, format string, args ...any) {
	pr := Problem{Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
	for _, have := range ps.list {
		if have == pr { // a statement in force at several queue statements
			return
		}
	}
	ps.list = append(ps.list, pr)
}

// isTOMLJobFile applies the detection rule documented on ParseFile.
func isTOMLJobFile(name string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(name), ".toml") {
		return true
	}
	continued := false // a submit continuation line may start with '['
	for _, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(l)
		if !continued && strings.HasPrefix(t, "[") {
			if i := strings.IndexByte(t, '#'); i > 0 {
				t = strings.TrimSpace(t[:i])
			}
			if strings.HasSuffix(t, "]") {
				return true
			}
		}
		continued = strings.HasSuffix(t, `\`)
	}
	return false
}

func applySpecDefaults(s *Spec) {
	if s.CPUs == 0 {
		s.CPUs = specDefaultCPUs
	}
	if s.MemoryMB == 0 {
		s.MemoryMB = specDefaultMemoryMB
	}
	if s.Stdout == "" {
		s.Stdout = "stdout"
	}
	if s.Stderr == "" {
		s.Stderr = "stderr"
	}
	if len(s.Domains) == 0 {
		s.Domains = []string{"local"}
	}
}

// classifyInput turns one input as written into an Input: federation
// URLs and absolute paths are fetched by the box; a relative name is a
// local file the CLI attaches (see LocalInputPrefix).
func classifyInput(item string) (Input, string) {
	if scheme, _, ok := strings.Cut(item, "://"); ok {
		switch strings.ToLower(scheme) {
		case "root", "roots", "https":
			return Input{From: item}, ""
		}
		return Input{}, fmt.Sprintf("%q: URL scheme %q is not supported (use root://, roots:// or https://)", item, scheme)
	}
	if strings.HasPrefix(item, "/") {
		return Input{From: item}, ""
	}
	return Input{From: LocalInputPrefix + item}, ""
}

// sizeMB reads a size as MB (MiB), rounding up. A bare number is in
// units of bare ("m": MB; "k": KiB, HTCondor's unit for disk). With condor
// set, K/M/G/T with or without a B are powers of 1024, as HTCondor
// defines them; otherwise units.ParseSize's meaning (GB = 10^9) holds.
func sizeMB(text, bare string, condor bool) (int64, string) {
	t := strings.ToLower(strings.TrimSpace(text))
	// ParseSize would take "inf" or "NaN": a size starts with a digit.
	if t == "" || !(t[0] >= '0' && t[0] <= '9' || t[0] == '.') {
		return 0, fmt.Sprintf("%q is not a size", text)
	}
	switch last := t[len(t)-1]; {
	case last >= '0' && last <= '9' || last == '.':
		t += bare
	case condor && last == 'b' && len(t) >= 2 && strings.IndexByte("kmgt", t[len(t)-2]) >= 0:
		t = t[:len(t)-1] // ParseSize's bare k/m/g/t are binary
	}
	n, err := units.ParseSize(t)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a size", text)
	}
	if n <= 0 {
		return 0, fmt.Sprintf("%q must be more than 0", text)
	}
	return (n + 1<<20 - 1) >> 20, ""
}

// SandboxPathProblem says what is wrong with a name that must stay inside
// the job's sandbox (outputs, stdout, an input's "as"), or "".
func SandboxPathProblem(n string) string {
	c := path.Clean(n)
	switch {
	case n == "":
		return "is empty"
	case strings.HasPrefix(n, "/") || strings.Contains(n, "://"):
		return fmt.Sprintf("%q must be a file name inside the job's sandbox, not an absolute path or URL", n)
	case c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsRune(n, 0):
		return fmt.Sprintf("%q leaves the job's sandbox", n)
	}
	return ""
}

// CheckSource says what is wrong with an input's source as the box
// fetches it (a URL of a supported scheme or a federation path), or "".
func CheckSource(from string) string {
	in, msg := classifyInput(from)
	if msg != "" {
		return msg
	}
	if strings.HasPrefix(in.From, LocalInputPrefix) {
		return fmt.Sprintf("%q must be a federation URL (root://, roots://, https://) or an absolute path; a local file is sent with the submission", from)
	}
	return ""
}

// CheckDestination says what is wrong with an output_destination, or "".
func CheckDestination(d string) string {
	in, msg := classifyInput(d)
	if msg != "" {
		return msg
	}
	if strings.HasPrefix(in.From, LocalInputPrefix) {
		return fmt.Sprintf("%q must be a federation URL (root://, roots://, https://) or an absolute path", d)
	}
	return ""
}

// checkQueueCount says what is wrong with a queue count, or "".
func checkQueueCount(n int64) string {
	if n < 1 {
		return fmt.Sprintf("queue count %d is not a positive integer", n)
	}
	if n > specMaxQueue {
		return fmt.Sprintf("queue count %d is more than %d", n, specMaxQueue)
	}
	return ""
}

// checkDomains returns a message for each bad domain name.
func checkDomains(names []string, known func(string) bool) []string {
	var msgs []string
	if len(names) == 0 {
		msgs = append(msgs, "no domain listed (leave it out for \"local\")")
	}
	seen := map[string]bool{}
	for _, d := range names {
		switch {
		case d == "":
			msgs = append(msgs, "empty domain name")
		case seen[d]:
			msgs = append(msgs, fmt.Sprintf("domain %q listed twice", d))
		case !known(d):
			msgs = append(msgs, fmt.Sprintf("unknown domain %q", d))
		}
		seen[d] = true
	}
	return msgs
}

// checkEnvName says what is wrong with a variable name about to be added
// to env, or "".
func checkEnvName(name string, env map[string]string) string {
	if name == "" {
		return "environment entry has no name before '='"
	}
	if strings.ContainsAny(name, "= \t\x00") {
		return fmt.Sprintf("%q is not a variable name", name)
	}
	if _, dup := env[name]; dup {
		return fmt.Sprintf("variable %s is set twice", name)
	}
	return ""
}
