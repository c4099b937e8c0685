package config

// validateJobs is the [jobs] section's own Validate, its keys placed in
// the file so each problem gets its line.
func (c *Config) validateJobs() []Problem {
	var ps []Problem
	for _, p := range c.Jobs.Validate(c.Server.StateDir) {
		ps = append(ps, Problem{Key: "jobs." + p.Key, Msg: p.Msg})
	}
	return append(ps, c.JobReadable()...)
}
