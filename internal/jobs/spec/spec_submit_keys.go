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
	"transfer_output_remaps", "getenv", "initialdir", "requirements", "rank",
	"+SingularityImage", "container_image", "docker_image",
}

// submitUnsupported are HTCondor keys users often carry over, with why
// sitebox refuses them rather than ignoring what they ask for. Read-only.
var submitUnsupported = map[string]string{
	"request_gpus": "not supported: sitebox has no GPU slots",
	"queue":        `queue is a statement, not a key: write "queue" or "queue N"`,
}
