package spec

import (
	"bytes"
	"strings"
)

// Macros kept until each proc is made ($(Process), $(Cluster), item
// variables) and their substitution into a Spec.

// processMacros maps the macros a job file may keep until queue time.
// Cluster is spelled one way so the server has one string to replace.
func processMacros(proc int, vars map[string]string) func(name string) string {
	return func(name string) string {
		base, _, _ := strings.Cut(name, ",")
		if v, ok := vars[strings.ToLower(base)]; ok && base == name {
			return v
		}
		switch strings.ToLower(base) {
		case "process", "procid":
			return jobMacroValue(name, proc)
		case "cluster", "clusterid":
			return "$(Cluster)"
		}
		return "$(" + name + ")"
	}
}

func isJobMacro(name string) bool {
	switch strings.ToLower(name) {
	case "process", "procid", "cluster", "clusterid", "step", "itemindex", "row":
		return true
	}
	return false
}

// mapMacros replaces every $(name) in s by f(name).
func mapMacros(s string, f func(name string) string) string {
	if !strings.Contains(s, "$(") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "$(")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], ')')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(f(s[i+2 : i+2+j]))
		s = s[i+3+j:]
	}
	b.WriteString(s)
	return b.String()
}

// mapSpecStrings returns a deep copy of s with f applied to the macros of
// every string a user wrote, so that the queued jobs share no slice or
// map (the server edits them in place).
func mapSpecStrings(s Spec, f func(name string) string) Spec {
	m := func(v string) string { return mapMacros(v, f) }
	list := func(vs []string) []string {
		if vs == nil {
			return nil
		}
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = m(v)
		}
		return out
	}
	s.Executable = m(s.Executable)
	s.Arguments = list(s.Arguments)
	if s.Env != nil {
		env := make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			env[k] = m(v)
		}
		s.Env = env
	}
	if s.Inputs != nil {
		ins := make([]Input, len(s.Inputs))
		for i, in := range s.Inputs {
			ins[i] = Input{From: m(in.From), As: m(in.As), Data: bytes.Clone(in.Data)}
		}
		s.Inputs = ins
	}
	s.Outputs = list(s.Outputs)
	if s.OutputRemaps != nil {
		rm := make(map[string]string, len(s.OutputRemaps))
		for k, v := range s.OutputRemaps {
			rm[m(k)] = m(v)
		}
		s.OutputRemaps = rm
	}
	s.OutputDestination = m(s.OutputDestination)
	s.Stdout, s.Stderr = m(s.Stdout), m(s.Stderr)
	s.Domains = list(s.Domains)
	s.InitialDir, s.Container = m(s.InitialDir), m(s.Container)
	return s
}
