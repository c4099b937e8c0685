//go:build !linux

package bench

// loopbackCongestion cannot be asked of a socket here.
func loopbackCongestion() string { return "" }
