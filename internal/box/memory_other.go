//go:build !linux

package box

// hostMemory is unknown here: the copy buffer budget takes its default
// for an unknown machine.
func hostMemory() int64 { return 0 }
