package admin

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// SocketName is the admin socket's file name inside the state dir.
const SocketName = "admin.sock"

// SocketPath returns where the admin socket of a box with this state dir is.
func SocketPath(stateDir string) string { return filepath.Join(stateDir, SocketName) }

// ErrRunning is returned by Listen when another live process answers on the
// admin socket, which means another box uses the same state dir.
var ErrRunning = errors.New("another sitebox is running")

// maxSocketPath is the longest path a Unix socket can bind on Linux
// (sun_path is 108 bytes including the terminating NUL).
const maxSocketPath = 107

// listenSocket binds the admin socket at SocketPath(stateDir), replacing a
// socket file left behind by a box that is gone but never one that still
// answers, nor a file that is not a socket.
func listenSocket(stateDir string) (net.Listener, error) {
	path := SocketPath(stateDir)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("admin socket path %s is %d bytes, longer than the %d a Unix socket allows: use a shorter state_dir", path, len(path), maxSocketPath)
	}
	// 0700 like the TLS directory: the state dir holds private keys.
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := removeStale(stateDir, path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	// Connecting needs write permission on the socket file. The usual umask
	// (022) already leaves none for others between bind and this chmod;
	// 0600 also shuts out the group.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	return ln, nil
}

func removeStale(stateDir, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("admin socket: %s exists and is not a socket; remove it or use another state_dir", path)
	}
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("%w with state dir %s (its admin socket %s answers); stop it or use another state_dir", ErrRunning, stateDir, path)
	}
	// Only a refused connection proves nobody listens; anything else (say,
	// a socket owned by another user) is reported rather than removed.
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("admin socket: checking whether %s is in use: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("admin socket: removing stale %s: %w", path, err)
	}
	return nil
}
