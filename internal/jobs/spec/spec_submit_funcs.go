package spec

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// macroFunc finds HTCondor's macro functions: $NAME(args).
var macroFunc = regexp.MustCompile(`\$([A-Za-z_]+)\(([^()]*)\)`)

// expandFuncs evaluates the macro functions of a value as HTCondor does,
// where it can: $ENV(NAME) from the environment of `sitebox submit` (as
// condor_submit reads its own), $INT and $REAL of a number or of a job
// macro (kept as "$(Process,%03d)" until each proc is made). Others are
// refused with why, never left in the job as text.
func expandFuncs(v string, defs map[string]string) (string, string) {
	bad := ""
	out := macroFunc.ReplaceAllStringFunc(v, func(m string) string {
		sub := macroFunc.FindStringSubmatch(m)
		name, args := strings.ToUpper(sub[1]), strings.TrimSpace(sub[2])
		switch name {
		case "ENV":
			return os.Getenv(args)
		case "INT", "REAL":
			arg, format, _ := strings.Cut(args, ",")
			arg, format = strings.TrimSpace(arg), strings.TrimSpace(format)
			if format == "" {
				format = map[string]string{"INT": "%d", "REAL": "%f"}[name]
			}
			if msg := checkNumberFormat(name, format); msg != "" {
				bad = msg
				return ""
			}
			switch strings.ToLower(arg) {
			case "process", "procid":
				return "$(" + arg + "," + name + "," + format + ")"
			case "cluster", "clusterid":
				bad = fmt.Sprintf("$%s(%s): the cluster number is known only when the box queues the jobs", name, args)
				return ""
			}
			if d, ok := defs[strings.ToLower(arg)]; ok {
				arg = strings.TrimSpace(d)
			}
			f, err := strconv.ParseFloat(arg, 64)
			if err != nil {
				bad = fmt.Sprintf("$%s(%s): %q is not a number", name, args, arg)
				return ""
			}
			return formatNumber(name, format, f)
		case "RANDOM_INTEGER":
			lo, hi, step, msg := randomIntegerArgs(args)
			if msg != "" {
				bad = msg
				return ""
			}
			// Drawn for each proc, as condor_submit expands it per proc.
			return fmt.Sprintf("$(Process,RANDOM_INTEGER,%d\x1f%d\x1f%d)", lo, hi, step)
		case "CHOICE":
			items := splitList(args, ",")
			if len(items) < 2 {
				bad = fmt.Sprintf("$CHOICE(%s): want an index and a list", args)
				return ""
			}
			idx, list := strings.TrimSpace(items[0]), items[1:]
			switch strings.ToLower(idx) {
			case "process", "procid":
				return "$(" + idx + ",CHOICE," + strings.Join(list, "\x1f") + ")"
			}
			if d, ok := defs[strings.ToLower(idx)]; ok {
				idx = strings.TrimSpace(d)
			}
			n, err := strconv.Atoi(idx)
			if err != nil || n < 0 || n >= len(list) {
				bad = fmt.Sprintf("$CHOICE(%s): index %q is not 0 to %d", args, idx, len(list)-1)
				return ""
			}
			return list[n]
		}
		if opts, ok := strings.CutPrefix(name, "F"); ok && opts != "" && strings.Trim(opts, "PDNXBQA") == "" {
			val, ok := defs[strings.ToLower(args)]
			if !ok {
				bad = fmt.Sprintf("$%s(%s): unknown macro %s", sub[1], args, args)
				return ""
			}
			return fileParts(strings.TrimSpace(val), opts)
		}
		bad = fmt.Sprintf("macro function $%s(...) is not supported (supported: $ENV, $INT, $REAL, $CHOICE, $RANDOM_INTEGER, $F…)", sub[1])
		return ""
	})
	return out, bad
}

// randomIntegerArgs reads $RANDOM_INTEGER(min, max[, step]).
func randomIntegerArgs(args string) (lo, hi, step int64, msg string) {
	f := strings.Split(args, ",")
	step = 1
	nums := []*int64{&lo, &hi, &step}
	if len(f) < 2 || len(f) > 3 {
		return 0, 0, 0, fmt.Sprintf("$RANDOM_INTEGER(%s): want min, max[, step]", args)
	}
	for i, s := range f {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < -1e15 || n > 1e15 {
			return 0, 0, 0, fmt.Sprintf("$RANDOM_INTEGER(%s): %q is not a whole number", args, strings.TrimSpace(s))
		}
		*nums[i] = n
	}
	if hi < lo || step < 1 {
		return 0, 0, 0, fmt.Sprintf("$RANDOM_INTEGER(%s): want min <= max and step >= 1", args)
	}
	return lo, hi, step, ""
}

// checkNumberFormat allows one printf verb of the kind the function
// makes, so a format cannot reach into other arguments.
func checkNumberFormat(fn, format string) string {
	verbs := "dixX"
	if fn == "REAL" {
		verbs = "feEgG"
	}
	if strings.Count(format, "%") != 1 || !regexp.MustCompile(`%[-+ 0#]*[0-9]{0,3}(\.[0-9]{1,3})?[`+verbs+`]`).MatchString(format) {
		return fmt.Sprintf("$%s format %q: want one %%-verb of %q (e.g. %%03d)", fn, format, verbs)
	}
	return ""
}

func formatNumber(fn, format string, f float64) string {
	if fn == "INT" {
		return fmt.Sprintf(format, int64(f))
	}
	return fmt.Sprintf(format, f)
}

// jobMacroValue is a job macro at queue time, with the $INT/$REAL format
// expandFuncs attached to it ("Process,INT,%03d").
func jobMacroValue(name string, value int) string {
	parts := strings.SplitN(name, ",", 3)
	if len(parts) != 3 {
		return strconv.Itoa(value)
	}
	if parts[1] == "RANDOM_INTEGER" {
		var lo, hi, step int64
		fmt.Sscanf(strings.ReplaceAll(parts[2], "\x1f", " "), "%d %d %d", &lo, &hi, &step)
		return strconv.FormatInt(lo+step*rand.Int64N((hi-lo)/step+1), 10)
	}
	if parts[1] == "CHOICE" {
		list := strings.Split(parts[2], "\x1f")
		if value >= len(list) {
			return "" // HTCondor: no such choice
		}
		return list[value]
	}
	return formatNumber(parts[1], parts[2], float64(value))
}

// fileParts is HTCondor's $F macro of path v: p the directory (with its
// slash), d the parent directory's name (with its slash), n the name
// without extension, x the extension (with its dot), b without a
// trailing slash, q in double quotes, a made absolute; no part letter:
// all of it.
func fileParts(v, opts string) string {
	has := func(c string) bool { return strings.Contains(opts, c) }
	if has("A") && !filepath.IsAbs(v) {
		if abs, err := filepath.Abs(v); err == nil {
			v = abs
		}
	}
	dir, file := "", v
	if i := strings.LastIndex(v, "/"); i >= 0 {
		dir, file = v[:i+1], v[i+1:]
	}
	name, ext := file, ""
	if i := strings.LastIndex(file, "."); i > 0 {
		name, ext = file[:i], file[i:]
	}
	out := ""
	switch {
	case has("P"):
		out = dir
	case has("D"):
		if d := strings.TrimSuffix(dir, "/"); d != "" {
			out = d[strings.LastIndex(d, "/")+1:] + "/"
		}
	}
	if has("N") {
		out += name
	}
	if has("X") {
		out += ext
	}
	if !has("P") && !has("D") && !has("N") && !has("X") {
		out = v
	}
	if has("B") {
		out = strings.TrimSuffix(out, "/")
	}
	if has("Q") {
		out = `"` + out + `"`
	}
	return out
}
