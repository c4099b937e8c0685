package krb5auth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"sitebox/internal/atomicfile"
)

// The replay cache file is a magic, then 32-byte records: the
// authenticator's tag (16 bytes), its client's (8) and its time (µs
// since 1970, big-endian, 8). Records are appended between rewrites; a
// torn last record (a crash while writing it) is ignored: its
// authenticator was not accepted, since acceptance waits for the sync.
const (
	replayMagic     = "SBXRC\x00\x00\x01"
	replayRecordLen = 32
	// maxReplayFile bounds what is read at start: a file this large was
	// not written by the cache (it rewrites itself at twice its bound).
	maxReplayFile = len(replayMagic) + (2*maxReplayEntries+2048)*replayRecordLen
)

type replayRecord struct {
	tag    replayTag
	client clientTag
	ctime  int64
}

func (r replayRecord) marshal(b []byte) {
	copy(b[0:16], r.tag[:])
	copy(b[16:24], r.client[:])
	binary.BigEndian.PutUint64(b[24:32], uint64(r.ctime))
}

// replayFile is the cache's file, held with an exclusive lock for the
// process's life: two processes sharing one would each miss the other's
// authenticators.
type replayFile struct {
	path string
	lock *os.File // path.lock, flocked
	f    *os.File // nil until the first rewrite
	size int64    // where the next record goes
}

// openReplayFile locks and reads the file at path. damage says why its
// content was unusable (then it counts as empty); err is a file that
// cannot be used at all.
func openReplayFile(path string) (f *replayFile, recs []replayRecord, damage, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("kerberos replay cache: %w", err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("kerberos replay cache: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil, nil, fmt.Errorf("kerberos replay cache %s is in use by another process (two boxes cannot share a state dir)", path)
		}
		return nil, nil, nil, fmt.Errorf("kerberos replay cache %s: lock: %w", path, err)
	}
	f = &replayFile{path: path, lock: lock}
	data, err := readBounded(path, maxReplayFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil, nil, nil
	case errors.Is(err, errTooLarge):
		return f, nil, err, nil
	case err != nil:
		lock.Close()
		return nil, nil, nil, fmt.Errorf("kerberos replay cache: %w", err)
	}
	recs, damage = parseReplay(data)
	return f, recs, damage, nil
}

var errTooLarge = fmt.Errorf("over %d bytes: not written by the replay cache", maxReplayFile)

// readBounded reads path, refusing one of more than limit bytes.
func readBounded(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// parseReplay reads the records of a file's content, or says why it
// holds none that can be trusted.
func parseReplay(data []byte) ([]replayRecord, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if !bytes.HasPrefix(data, []byte(replayMagic)) {
		return nil, errors.New("not a replay cache (wrong magic)")
	}
	data = data[len(replayMagic):]
	recs := make([]replayRecord, 0, len(data)/replayRecordLen)
	for ; len(data) >= replayRecordLen; data = data[replayRecordLen:] {
		var r replayRecord
		copy(r.tag[:], data[0:16])
		copy(r.client[:], data[16:24])
		r.ctime = int64(binary.BigEndian.Uint64(data[24:32]))
		recs = append(recs, r)
	}
	return recs, nil
}

// rewrite replaces the file with recs, synced, in one step (a crash
// leaves the old file or the new, both holding every live entry), and
// appends to the new one from then on.
func (rf *replayFile) rewrite(recs []replayRecord) error {
	data := make([]byte, len(replayMagic)+len(recs)*replayRecordLen)
	copy(data, replayMagic)
	for i, r := range recs {
		r.marshal(data[len(replayMagic)+i*replayRecordLen:])
	}
	if err := atomicfile.Write(rf.path, data, 0o600); err != nil {
		return fmt.Errorf("kerberos replay cache: %w", err)
	}
	f, err := os.OpenFile(rf.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("kerberos replay cache: %w", err)
	}
	if rf.f != nil {
		rf.f.Close()
	}
	rf.f, rf.size = f, int64(len(data))
	return nil
}

// append writes one record after the last whole one (a failed write
// leaves at most a torn record there, which the next one overwrites).
func (rf *replayFile) append(r replayRecord) error {
	var b [replayRecordLen]byte
	r.marshal(b[:])
	if _, err := rf.f.WriteAt(b[:], rf.size); err != nil {
		return fmt.Errorf("kerberos replay cache %s: write: %w", rf.path, err)
	}
	rf.size += replayRecordLen
	return nil
}

func (rf *replayFile) sync() error {
	if err := rf.f.Sync(); err != nil {
		return fmt.Errorf("kerberos replay cache %s: sync: %w", rf.path, err)
	}
	return nil
}

// wasteful reports whether most records are of expired entries, so a
// rewrite is due.
func (rf *replayFile) wasteful(live int) bool {
	recs := (rf.size - int64(len(replayMagic))) / replayRecordLen
	return recs > 2*int64(live)+1024
}

func (rf *replayFile) close() error {
	var err error
	if rf.f != nil {
		err = rf.f.Close()
	}
	rf.lock.Close() // releases the lock
	return err
}
