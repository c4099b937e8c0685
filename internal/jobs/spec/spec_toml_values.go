package spec

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

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
			msg = SandboxPathProblem(as)
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
