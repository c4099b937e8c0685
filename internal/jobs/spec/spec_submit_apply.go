package spec

import (
	"strconv"
	"strings"
)

// apply interprets one statement whose macros are expanded. It is one
// flat switch, a case per submit key, longer than most functions so the
// whole vocabulary reads as one table.
func (p *submitParser) apply(st submitStmt, v string) {
	add := func(format string, args ...any) { p.ps.add(st.line, st.key, format, args...) }
	switch st.name {
	case "executable":
		p.sawExec = true
		if s, ok := p.plain(st, v); ok {
			p.spec.Executable = s
		}
	case "arguments":
		if args, msg := splitCondorArgs(v); msg != "" {
			add("%s", msg)
		} else {
			p.spec.Arguments = args
		}
	case "environment":
		env, msgs := parseCondorEnv(v)
		for _, m := range msgs {
			add("%s", m)
		}
		if len(msgs) == 0 {
			p.spec.Env = env
		}
	case "request_cpus":
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			add("%q is not a whole number", v)
		case n < 1:
			add("must be at least 1, not %d", n)
		default:
			p.spec.CPUs = n
		}
	case "request_memory":
		if mb, msg := sizeMB(v, "m", true); msg != "" {
			add("%s (a bare number is MB; e.g. 2048, 2GB, 512MB)", msg)
		} else {
			p.spec.MemoryMB = mb
		}
	case "request_disk":
		if mb, msg := sizeMB(v, "k", true); msg != "" {
			add("%s (a bare number is KiB, as in HTCondor; e.g. 4000000, 4GB)", msg)
		} else {
			p.spec.DiskMB = mb
		}
	case "transfer_input_files":
		if s, ok := p.plain(st, v); ok {
			for _, item := range splitCommaList(s) {
				if in, msg := classifyInput(item); msg != "" {
					add("%s", msg)
				} else {
					p.spec.Inputs = append(p.spec.Inputs, in)
				}
			}
		}
	case "transfer_output_files":
		if s, ok := p.plain(st, v); ok {
			for _, item := range splitCommaList(s) {
				if msg := SandboxPathProblem(item); msg != "" {
					add("%s", msg)
				} else {
					p.spec.Outputs = append(p.spec.Outputs, item)
				}
			}
		}
	case "transfer_output_remaps":
		q := strings.TrimSpace(v)
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			add("must be a quoted list: transfer_output_remaps = \"a.txt = b.txt; c = d\"")
		} else if m, msg := ParseRemaps(q[1 : len(q)-1]); msg != "" {
			add("%s", msg)
		} else {
			p.spec.OutputRemaps = m
		}
	case "output_destination":
		if s, ok := p.plain(st, v); ok {
			if msg := CheckDestination(s); msg != "" {
				add("%s", msg)
			} else {
				p.spec.OutputDestination = s
			}
		}
	case "output", "error":
		if s, ok := p.plain(st, v); ok {
			if msg := SandboxPathProblem(s); msg != "" {
				add("%s", msg)
			} else if st.name == "output" {
				p.spec.Stdout = s
			} else {
				p.spec.Stderr = s
			}
		}
	case "universe":
		switch strings.ToLower(v) {
		case "vanilla":
		case "docker", "container":
			p.containerUniverse = st // needs an image: checked in finish
		default:
			add("universe %q is not supported (vanilla, or container/docker with an image)", v)
		}
	case "+singularityimage", "container_image", "docker_image":
		p.containerImage(st, v)
	case "getenv":
		if strings.TrimSpace(v) == "" {
			add("has no value: true, false, or a list of variable names")
		} else {
			p.getenv = strings.TrimSpace(v)
		}
	case "initialdir":
		if s, ok := p.plain(st, v); ok {
			p.initialDir = s
		}
	case "requirements":
		p.requirements = p.expression(st, v)
	case "rank":
		p.rank = p.expression(st, v)
	case "log", "should_transfer_files", "when_to_transfer_output", "notification", "notify_user":
		// HTCondor bookkeeping with no meaning here: the box keeps its
		// own event record and always transfers files.
	case "+domains":
		p.domains(st, v)
	case "+desired_sites":
		p.desiredSites(st, v)
	case "+backfill":
		switch strings.ToLower(v) {
		case "true":
			p.spec.Backfill = true
		case "false":
		default:
			add("must be true or false, not %q", v)
		}
	case "+maxwalltime", "+walltime", "+maxruntime":
		p.wallTime(st, v)
	case "+jobflavour":
		p.jobFlavour(st, v)
	case "max_retries":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100 {
			add("%q is not a number of retries from 0 to 100", v)
		} else {
			p.spec.MaxRetries = n
		}
	default:
		if reason, ok := submitUnsupported[st.name]; ok {
			add("%s", reason)
		} else if !p.used[st.name] || strings.HasPrefix(st.name, "+") {
			add("%s", unknownMsg("key", st.key, submitKeys))
		} // else a macro the file uses as $(name)
	}
}

// plain checks a value HTCondor takes verbatim (a path, a list of
// files): present, and not in quotes, which HTCondor would keep as part
// of the name.
func (p *submitParser) plain(st submitStmt, v string) (string, bool) {
	switch {
	case v == "":
		p.ps.add(st.line, st.key, "has no value")
	case strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'"):
		p.ps.add(st.line, st.key, "quoted value: submit-file values are not quoted (for a TOML job file, put the keys under a [job] table)")
	default:
		return v, true
	}
	return "", false
}

// once reports whether st is the first of a group of keys that mean the
// same thing, complaining when it is not.
func (p *submitParser) once(st submitStmt, group string) bool {
	if first, ok := p.either[group]; ok {
		p.ps.add(st.line, st.key, "means the same as %s (line %d): set only one", first.key, first.line)
		return false
	}
	p.either[group] = st
	return true
}

func (p *submitParser) domains(st submitStmt, v string) {
	if !p.once(st, "domains") {
		return
	}
	s, msg := classAdString(v)
	if msg != "" {
		p.ps.add(st.line, st.key, "%s", msg)
		return
	}
	names := splitCommaList(s)
	msgs := checkDomains(names, p.known)
	for _, m := range msgs {
		p.ps.add(st.line, st.key, "%s", m)
	}
	if len(msgs) == 0 {
		p.spec.Domains = names
	}
}
