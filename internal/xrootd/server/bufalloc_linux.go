package server

import "syscall"

// allocBuf maps n bytes of anonymous memory outside the Go heap; on failure
// it falls back to the heap.
func allocBuf(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), false
	}
	return b, true
}

func freeBuf(b []byte) { syscall.Munmap(b) }
