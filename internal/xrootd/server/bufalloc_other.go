//go:build !linux

package server

// allocBuf allocates n bytes on the heap.
func allocBuf(n int) ([]byte, bool) { return make([]byte, n), false }

func freeBuf([]byte) {}
