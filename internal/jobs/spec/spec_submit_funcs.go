package spec

import (
	"fmt"
	"os"
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
		}
		bad = fmt.Sprintf("macro function $%s(...) is not supported (supported: $ENV, $INT, $REAL)", sub[1])
		return ""
	})
	return out, bad
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
	return formatNumber(parts[1], parts[2], float64(value))
}
