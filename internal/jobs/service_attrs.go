package jobs

import (
	"fmt"
	"runtime"
	"sort"
	"strings"

	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/spec"
)

// DomainAttributes are each domain's machine attributes as HTCondor
// names them, for a submit file's Requirements, Rank and container jobs.
// The box's own cores (local) advertise what they are; another domain
// advertises only that the box cannot run containers there (its machines
// are the batch system's, which the box does not see), so a Requirements
// clause on another attribute does not match it.
func (s *Service) DomainAttributes() map[string]map[string]any {
	out := map[string]map[string]any{"local": {
		"OpSys":          "LINUX",
		"Arch":           condorArch(runtime.GOARCH),
		"Cpus":           s.cfg.CPUs,
		"Memory":         s.cfg.MemoryMB,
		"HasSingularity": local.ContainerRuntime() != "",
	}}
	for _, name := range s.Domains()[1:] {
		attrs := map[string]any{}
		for k, v := range s.domains[name].Attributes {
			attrs[k] = v
		}
		attrs["HasSingularity"] = false
		out[name] = attrs
	}
	return out
}

// checkDomainAttributes checks a domain's configured attributes: the
// ones a submit file may name, of their types. HasSingularity is not
// one: the box runs container jobs only on its own cores.
func checkDomainAttributes(attrs map[string]any) []string {
	var msgs []string
	for k, v := range attrs {
		switch k {
		case "OpSys", "Arch":
			if _, ok := v.(string); !ok {
				msgs = append(msgs, fmt.Sprintf("%s must be a string", k))
			}
		case "Cpus", "Memory":
			if n, ok := v.(int64); !ok || n < 0 {
				msgs = append(msgs, fmt.Sprintf("%s must be a whole number, 0 or more", k))
			}
		case "HasSingularity":
			msgs = append(msgs, "HasSingularity cannot be set: the box runs container jobs only on its own cores")
		default:
			msgs = append(msgs, fmt.Sprintf("%q is not an attribute submit files can use (OpSys, Arch, Cpus, Memory)", k))
		}
	}
	sort.Strings(msgs)
	return msgs
}

// condorArch spells a Go architecture as HTCondor's Arch attribute.
func condorArch(goarch string) string {
	switch goarch {
	case "amd64":
		return "X86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "INTEL"
	case "ppc64le":
		return "ppc64le"
	}
	return strings.ToUpper(goarch)
}

// checkContainer refuses a container job for a domain that cannot run
// it: the client's check is not trusted.
func (s *Service) checkContainer(sp *spec.Spec) error {
	if sp.Container == "" {
		return nil
	}
	attrs := s.DomainAttributes()
	for _, d := range sp.Domains {
		if ok, _ := attrs[d]["HasSingularity"].(bool); !ok {
			return fmt.Errorf("container image %s: domain %s has no container runtime (apptainer is not installed on the box)", sp.Container, d)
		}
	}
	return nil
}
