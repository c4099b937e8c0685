package config

import (
	"net/url"

	"sitebox/internal/remote"
)

// validateJobs is the [jobs] section's own Validate and what [jobs] asks
// of the other sections.
func (c *Config) validateJobs() []Problem {
	ps := c.Jobs.Validate(c.Server.StateDir)
	if c.Jobs.Enabled && c.Jobs.StageTokenFile != "" {
		if msg := c.stageTokenProblem(); msg != "" {
			ps = append(ps, Problem{Key: "jobs.stage_token_file", Msg: msg})
		}
	}
	return append(ps, c.JobReadable()...)
}

// stageTokenProblem says why the box's stage token could not be used as
// staging uses it — toward the site cache's server only, over TLS, for
// owners judged by the box's namespace rules — or "".
func (c *Config) stageTokenProblem() string {
	u, err := url.Parse(c.Jobs.Cache)
	switch {
	case c.Jobs.Cache == "":
		return "the stage token goes only to the site cache's server: set [jobs] cache to it, or remove stage_token_file"
	case err != nil || !remote.Encrypted(u.Scheme):
		return "the stage token would go in clear: give [jobs] cache a roots:// or https:// URL, or remove stage_token_file"
	case len(c.Auth.Namespaces) == 0:
		return "the box stages with its own token only for paths its [[auth.namespace]] rules let the job's owner reach, and there are none: add rules describing the site cache's namespaces, or remove stage_token_file (staging then reads the site cache anonymously)"
	}
	return ""
}
