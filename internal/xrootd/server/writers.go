package server

// One client at a time writes a file, as XRootD's file lock lets one
// writer have it: the store's writer lock (store.WriterLocker, shared
// with https PUT and third-party copies) is taken before an open for
// writing can truncate or interleave with the writer holding it, so two
// concurrent `xrdcp -f` to one path leave one whole upload, never a mix,
// and racing creates get a clear kXR_FileLocked instead of a spurious
// "file already exists". Readers are not locked out (see
// docs/root-protocol.md), nor is the session holding the lock (its
// owner): a client may open its own file again (to update pages it
// wrote with pgwrite).

// unlockWriter gives back f's writer lock, if it holds one.
func (f *openFile) unlockWriter() {
	if f.unlock != nil {
		f.unlock()
	}
}
