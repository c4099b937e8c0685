package slurm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/jobs"
)

// slurmScript is the batch script for j: #SBATCH lines for what the
// spec asks, the job's environment, then exec of its program, so the
// program's exit status is the job's.
//
// --export=NONE keeps this process's environment (which may hold
// secrets) out of the job: Slurm gives it the user's login environment
// and the script adds HOME, TMPDIR and _CONDOR_SCRATCH_DIR pointing at
// the sandbox (as the local domain does), then Spec.Env. It writes the
// script top to bottom in one function, a little over 80 lines, so the
// script reads in the order Slurm will.
func slurmScript(j *jobs.Job, partition string) (string, error) {
	sp, dir := j.Spec, j.SandboxDir
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("sandbox %q is not an absolute path", dir)
	}
	if sp.Executable == "" {
		return "", errors.New("no executable")
	}
	out, err := sandboxFile(dir, sp.Stdout, "stdout")
	if err != nil {
		return "", err
	}
	errf, err := sandboxFile(dir, sp.Stderr, "stderr")
	if err != nil {
		return "", err
	}
	if err := sbatchSafe(dir); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	cpus, mem := max(sp.CPUs, 1), sp.MemoryMB
	if mem <= 0 {
		mem = 1024
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	opt := func(name, value string) { fmt.Fprintf(&b, "#SBATCH --%s=%s\n", name, value) }
	opt("job-name", slurmJobName(j.ID))
	// Slurm expands %j and the like in file names; %% is a plain %.
	opt("output", sbatchQuote(strings.ReplaceAll(out, "%", "%%")))
	opt("error", sbatchQuote(strings.ReplaceAll(errf, "%", "%%")))
	opt("chdir", sbatchQuote(dir))
	opt("export", "NONE")
	opt("nodes", "1")
	opt("ntasks", "1")
	opt("cpus-per-task", strconv.Itoa(cpus))
	opt("mem", strconv.FormatInt(mem, 10)+"M")
	if sp.WallTime > 0 {
		// Slurm counts whole minutes; round up so the limit is never
		// shorter than asked.
		opt("time", strconv.FormatInt(int64((sp.WallTime+time.Minute-1)/time.Minute), 10))
	}
	if partition != "" {
		if err := sbatchSafe(partition); err != nil {
			return "", fmt.Errorf("partition: %w", err)
		}
		opt("partition", sbatchQuote(partition))
	}
	env := map[string]string{"HOME": dir, "TMPDIR": dir, "_CONDOR_SCRATCH_DIR": dir}
	for k, v := range sp.Env {
		env[k] = v
	}
	for _, k := range sortedKeys(env) {
		if !shellName(k) {
			return "", fmt.Errorf("environment variable name %q is not a valid shell name", k)
		}
		if strings.ContainsRune(env[k], 0) {
			return "", fmt.Errorf("environment variable %s holds a NUL byte", k)
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(env[k]))
	}
	exe := sp.Executable
	// A bare name that the submission shipped into the sandbox means
	// that file, not a program of the same name on PATH.
	if !strings.Contains(exe, "/") {
		if fi, err := os.Stat(filepath.Join(dir, exe)); err == nil && fi.Mode().IsRegular() {
			exe = "./" + exe
		}
	}
	words := []string{"exec", shellQuote(exe)}
	for _, a := range sp.Arguments {
		if strings.ContainsRune(a, 0) {
			return "", errors.New("an argument holds a NUL byte")
		}
		words = append(words, shellQuote(a))
	}
	if strings.ContainsRune(exe, 0) {
		return "", errors.New("the executable name holds a NUL byte")
	}
	b.WriteString(strings.Join(words, " ") + "\n")
	return b.String(), nil
}

// sandboxFile is the absolute path of sandbox file name (def when empty),
// which must stay inside the sandbox.
func sandboxFile(dir, name, def string) (string, error) {
	if name == "" {
		name = def
	}
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%s file %q is not a path inside the sandbox", def, name)
	}
	p := filepath.Join(dir, name)
	if err := sbatchSafe(p); err != nil {
		return "", fmt.Errorf("%s file: %w", def, err)
	}
	return p, nil
}

// sbatchSafe rejects what an #SBATCH line cannot carry: line breaks and
// other control characters, backslashes (in a file name one turns off
// Slurm's %-expansion, so %% would stay doubled), and the words
// "packjob"/"hetjob", which sbatch blanks out anywhere on the line.
func sbatchSafe(s string) error {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("%q holds a control character or backslash", s)
		}
	}
	if l := strings.ToLower(s); strings.Contains(l, "packjob") || strings.Contains(l, "hetjob") {
		return fmt.Errorf("%q contains a word sbatch removes from #SBATCH lines (packjob, hetjob)", s)
	}
	return nil
}

// sbatchQuote double-quotes s for an #SBATCH line, where quotes group
// words and a backslash escapes the next character.
func sbatchQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// shellQuote single-quotes s for /bin/sh: inside single quotes nothing
// is special except the quote itself, which is written by closing the
// quotes, adding an escaped quote and opening them again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellName reports whether k can be exported by /bin/sh.
func shellName(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// sortedKeys returns m's keys in order, for a stable script.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
