package client

// A proxy renewed on disk must reach the server at the next request,
// but a connection keeps the identity its login proved. So an FS asks
// Options.Proxy before using a connection and dials again when the
// credential changed; the old connection is retired: no new requests,
// closed once the files opened on it are closed.

// stale reports whether c logged in with another proxy than the one
// Options.Proxy gives now: the proxy file was renewed or replaced, and
// the next request must carry the new credential.
func (f *FS) stale(c *Conn) bool {
	if f.opts.Proxy == nil {
		return false
	}
	cur, _ := f.opts.Proxy()
	return cur != c.cred
}

// retire closes the connection once its open files are closed: new
// requests go to another connection, the reads of files opened here
// finish here. A request already in flight on an idle connection when
// it is retired fails as after a dropped connection (once, at a
// renewal).
func (c *Conn) retire() {
	c.retired.Store(true)
	if c.files.Load() == 0 {
		c.Close()
	}
}

// fileClosed notes a file closed on the connection.
func (c *Conn) fileClosed() {
	if c.files.Add(-1) == 0 && c.retired.Load() {
		c.Close()
	}
}
