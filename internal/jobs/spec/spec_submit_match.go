package spec

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
)

// Target is what a job file is read against: the box's domains and what
// each offers. The zero value accepts any domain and knows no attribute.
type Target struct {
	// Known reports whether a domain exists (nil: any).
	Known func(domain string) bool
	// Sites maps a grid site name to the domains serving it, for
	// +DESIRED_Sites (nil: none).
	Sites func(site string) []string
	// Attrs are each domain's machine attributes, as HTCondor names them
	// (OpSys, Arch, Cpus, Memory, HasSingularity), for Requirements, Rank
	// and container jobs. An attribute a domain lacks is undefined there,
	// so a Requirements clause on it does not match that domain.
	Attrs map[string]map[string]any
}

// attr is domain d's attribute name (case-insensitive, as ClassAds).
func (t Target) attr(d, name string) adValue {
	for k, v := range t.Attrs[d] {
		if strings.EqualFold(k, name) {
			return adOf(v)
		}
	}
	return undefined
}

// submitExpr is a Requirements or Rank expression and where it was set.
type submitExpr struct {
	st submitStmt
	e  adExpr
}

// expression parses a Requirements or Rank value.
func (p *submitParser) expression(st submitStmt, v string) *submitExpr {
	e, msg := parseClassAd(v)
	if msg != "" {
		p.ps.add(st.line, st.key, "%s", msg)
		return nil
	}
	return &submitExpr{st: st, e: e}
}

// container notes the image of a container job.
func (p *submitParser) containerImage(st submitStmt, v string) {
	if !p.once(st, "container") {
		return
	}
	img := strings.TrimSpace(v)
	if strings.HasPrefix(img, `"`) {
		s, msg := classAdString(img)
		if msg != "" {
			p.ps.add(st.line, st.key, "%s", msg)
			return
		}
		img = s
	}
	if img == "" || strings.ContainsAny(img, " \t\n") {
		p.ps.add(st.line, st.key, "%q is not an image name or path", clipText(img))
		return
	}
	p.container = img
	p.containerSt = st
}

// finish applies what needs the whole block read: the submitter's
// environment (getenv), initialdir, and the choice of domains by
// container runtime, Requirements and Rank.
func (p *submitParser) finish() {
	if p.getenv != "" {
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			// The token sitebox submit itself uses is never copied into
			// jobs (their records, partner boxes): set it in environment
			// to pass it on purpose.
			if k != "" && k != "BEARER_TOKEN" && getenvMatches(p.getenv, k) {
				env[k] = v
			}
		}
		for k, v := range p.spec.Env { // environment overrides getenv, as in HTCondor
			env[k] = v
		}
		p.spec.Env = env
	}
	if dir := p.initialDir; dir != "" {
		p.spec.InitialDir = dir
		for i, in := range p.spec.Inputs {
			if name, ok := strings.CutPrefix(in.From, LocalInputPrefix); ok && !path.IsAbs(name) {
				p.spec.Inputs[i].From = LocalInputPrefix + path.Join(dir, name)
				if in.As == "" {
					p.spec.Inputs[i].As = path.Base(name)
				}
			}
		}
	}
	if u := p.containerUniverse; u.line > 0 && p.container == "" {
		p.ps.add(u.line, u.key, "universe %s needs an image: set container_image (or docker_image)", u.val)
	}
	if p.container == "" && p.requirements == nil && p.rank == nil {
		return
	}
	p.spec.Container = p.container
	p.chooseDomains()
}

// chooseDomains keeps the job's domains that have a container runtime
// (for a container job) and meet Requirements, best Rank first.
func (p *submitParser) chooseDomains() {
	cands := p.spec.Domains
	if len(cands) == 0 {
		cands = []string{"local"}
	}
	job := func(d string) func(string) adValue {
		return func(name string) adValue {
			switch name {
			case "RequestCpus":
				return adValue{kind: 'n', n: float64(max(p.spec.CPUs, specDefaultCPUs))}
			case "RequestMemory":
				mb := p.spec.MemoryMB
				if mb == 0 {
					mb = specDefaultMemoryMB
				}
				return adValue{kind: 'n', n: float64(mb)}
			case "RequestDisk":
				return adValue{kind: 'n', n: float64(p.spec.DiskMB * 1024)} // KiB, as HTCondor
			}
			return p.target.attr(d, name)
		}
	}
	var keep []string
	var why []string
	for _, d := range cands {
		switch {
		case p.container != "" && !truthy(p.target.attr(d, "HasSingularity")):
			why = append(why, fmt.Sprintf("%s has no container runtime", d))
		case p.requirements != nil && !truthy(p.requirements.e.eval(job(d))):
			why = append(why, fmt.Sprintf("%s does not meet Requirements (%s)", d, p.describe(d)))
		default:
			keep = append(keep, d)
		}
	}
	if len(keep) == 0 {
		p.refuseDomains(cands, why)
		return
	}
	if p.rank != nil {
		rank := func(d string) float64 {
			v := p.rank.e.eval(job(d))
			if v.kind == 'b' {
				return boolNum(v.b)
			}
			return v.n // undefined, a string: 0
		}
		sort.SliceStable(keep, func(i, j int) bool { return rank(keep[i]) > rank(keep[j]) })
	}
	p.spec.Domains = keep
}

func (p *submitParser) refuseDomains(cands, why []string) {
	if p.container != "" && p.requirements == nil {
		p.ps.add(p.containerSt.line, p.containerSt.key, "container jobs run in apptainer (or singularity), and none of this job's domains (%s) has a container runtime: "+
			"apptainer is not installed on the box (Debian 12 does not package it); install it, or send the job to a domain whose site runs containers",
			strings.Join(cands, ", "))
		return
	}
	st := p.containerSt
	if p.requirements != nil {
		st = p.requirements.st
	}
	p.ps.add(st.line, st.key, "no domain of the job can run it: %s", strings.Join(why, "; "))
}

// describe lists domain d's attributes for a message.
func (p *submitParser) describe(d string) string {
	var out []string
	for _, a := range domainAttrs {
		if v := p.target.attr(d, a); v.kind != 'u' {
			out = append(out, a+"="+adString(v))
		}
	}
	if len(out) == 0 {
		return "it advertises no attributes"
	}
	return "it has " + strings.Join(out, " ")
}

func adString(v adValue) string {
	switch v.kind {
	case 'b':
		return fmt.Sprint(v.b)
	case 'n':
		return fmt.Sprint(v.n)
	case 's':
		return `"` + v.s + `"`
	}
	return "undefined"
}

func truthy(v adValue) bool { return v.kind == 'b' && v.b }

// getenvMatches applies getenv's value: true (everything), false
// (nothing), or a list of names and * patterns, matched without regard
// to case as HTCondor does.
func getenvMatches(list, name string) bool {
	switch strings.ToLower(list) {
	case "true", "yes":
		return true
	case "false", "no":
		return false
	}
	for _, pat := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if ok, _ := path.Match(strings.ToLower(pat), strings.ToLower(name)); ok {
			return true
		}
	}
	return false
}
