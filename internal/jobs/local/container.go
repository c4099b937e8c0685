package local

import "os/exec"

// ContainerRuntime is the path of apptainer (or its older name,
// singularity) on the box, "" when there is none. Container jobs
// (+SingularityImage, container_image) run locally only with one.
func ContainerRuntime() string {
	for _, name := range []string{"apptainer", "singularity"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// containerArgs wraps a job's command to run in image with runtime: the
// sandbox bound at its own path and the working directory, the home
// directory left out so the job sees only its sandbox.
func containerArgs(runtime, image, sandbox, exe string, args []string) (string, []string) {
	out := []string{"exec", "--no-home", "--bind", sandbox, "--pwd", sandbox, image, exe}
	return runtime, append(out, args...)
}
