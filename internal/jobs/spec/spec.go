// Package spec is what a user asks to run: the Spec of one job and the
// two job-file formats it is read from (HTCondor-style submit files and
// TOML), with line-numbered problems for bad files.
package spec

import (
	"fmt"
	"strings"
	"time"
)

// Spec is what a user asks to run: one job of a submission (a submit
// file's "queue N" makes N specs differing in Process).
type Spec struct {
	Executable string            `json:"executable"`
	Arguments  []string          `json:"arguments,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	CPUs       int               `json:"cpus"`                // default 1
	MemoryMB   int64             `json:"memory_mb"`           // default 1024
	DiskMB     int64             `json:"disk_mb,omitempty"`   // sandbox size limit (0: none)
	WallTime   time.Duration     `json:"wall_time,omitempty"` // limit; also the "short before long" hint (0: unknown)
	// Inputs are fetched into the sandbox before the job starts:
	// federation URLs (root://, https://) or paths (/store/...) read
	// through the site's cache, or files shipped with the submission.
	Inputs []Input `json:"inputs,omitempty"`
	// Outputs are sandbox files copied to OutputDestination (a federation
	// URL directory) after a successful run.
	// Without a destination they stay in the sandbox for `sitebox fetch`.
	// A declared output the job did not write fails the job.
	Outputs           []string `json:"outputs,omitempty"`
	OutputDestination string   `json:"output_destination,omitempty"`
	// OutputRemaps renames outputs on their way back (HTCondor's
	// transfer_output_remaps): sandbox name → name at the destination,
	// a relative path.
	OutputRemaps map[string]string `json:"output_remaps,omitempty"`
	// Stdout and Stderr name sandbox files (defaults "stdout", "stderr"),
	// returned by `sitebox logs`.
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Domains the job may run in, in the user's order of preference.
	Domains []string `json:"domains"`
	// Backfill jobs use only idle local slots at the lowest priority and
	// are preempted (SIGTERM, grace, SIGKILL, requeue) by real jobs.
	Backfill bool `json:"backfill,omitempty"`
	// MaxRetries reruns a job that exits non-zero up to this many times
	// (HTCondor's max_retries).
	MaxRetries int `json:"max_retries,omitempty"`
	// InitialDir is where, on the submitter's machine, the job's local
	// input files are read from and its outputs returned to (HTCondor's
	// initialdir; relative to where sitebox submit runs). The box never
	// uses it.
	InitialDir string `json:"initial_dir,omitempty"`
	// Container is the image the job runs in (+SingularityImage,
	// container_image, docker_image), with apptainer; only domains that
	// have a container runtime take it.
	Container string `json:"container,omitempty"`
	// Cluster and Process number the jobs of one submission, as HTCondor
	// does ($(Cluster).$(Process)).
	Cluster int64 `json:"cluster"`
	Process int   `json:"process"`
}

// Input is one file the job needs: From is a URL or federation path, As
// the name in the sandbox (default: the last path element). Data holds a
// small file sent with the submission itself (transfer_input_files of a
// local file).
type Input struct {
	From string `json:"from,omitempty"`
	As   string `json:"as,omitempty"`
	Data []byte `json:"data,omitempty"`
	// Ref names a file shipped once for a whole submission (by the hex
	// SHA-256 of its bytes), which the box keeps once for all its jobs.
	Ref string `json:"ref,omitempty"`
}

// OutputName is where output o goes at its destination: its remap, else
// its own name.
func (sp *Spec) OutputName(o string) string {
	if r, ok := sp.OutputRemaps[o]; ok {
		return r
	}
	return o
}

// ParseRemaps reads transfer_output_remaps' value ("a = b; c = d", the
// quotes already removed).
func ParseRemaps(v string) (map[string]string, string) {
	out := map[string]string{}
	for _, item := range strings.Split(v, ";") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		src, dst, ok := strings.Cut(item, "=")
		src, dst = strings.TrimSpace(src), strings.TrimSpace(dst)
		switch {
		case !ok || src == "" || dst == "":
			return nil, fmt.Sprintf("%q is not \"name = new name\"", strings.TrimSpace(item))
		case SandboxPathProblem(src) != "":
			return nil, "remap of " + SandboxPathProblem(src)
		case SandboxPathProblem(dst) != "":
			return nil, "remap to " + SandboxPathProblem(dst) + " (only relative names are supported)"
		}
		out[src] = dst
	}
	return out, ""
}
