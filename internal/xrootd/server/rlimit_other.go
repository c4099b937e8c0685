//go:build !unix

package server

// descriptorLimit is unknown here: the default limits apply as they are.
func descriptorLimit() int { return 0 }
