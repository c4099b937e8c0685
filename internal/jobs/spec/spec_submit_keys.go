package spec

// submitKeys are the keys a submit file may set, spelled for messages
// and suggestions. Read-only.
var submitKeys = []string{
	"executable", "arguments", "environment", "request_cpus", "request_memory",
	"request_disk", "transfer_input_files", "transfer_output_files",
	"output_destination", "output", "error", "log", "universe",
	"should_transfer_files", "when_to_transfer_output", "notification",
	"notify_user", "+Domains", "+DESIRED_Sites", "+Backfill",
	"+MaxWallTime", "+WallTime", "+MaxRuntime", "+JobFlavour", "max_retries",
	"transfer_output_remaps",
}

// submitUnsupported are HTCondor keys users often carry over, with why
// sitebox refuses them rather than ignoring what they ask for. Read-only.
var submitUnsupported = map[string]string{
	"getenv":            "not supported: list the variables in environment",
	"requirements":      "not supported: choose where the job runs with +Domains",
	"rank":              "not supported: +Domains lists domains in order of preference",
	"request_gpus":      "not supported: sitebox has no GPU slots",
	"initialdir":        "not supported: relative names are read from where sitebox submit runs",
	"+singularityimage": "not supported: container jobs need a runtime (apptainer) the box does not have; run the image's command directly or use a site that offers containers",
	"docker_image":      "not supported: the docker universe needs a container runtime the box does not have",
	"queue":             `queue is a statement, not a key: write "queue" or "queue N"`,
}
