//go:build !unix

package bench

// openFilesLimit is unknown here.
func openFilesLimit() uint64 { return 0 }
