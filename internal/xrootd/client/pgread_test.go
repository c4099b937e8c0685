package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// pgServer serves content with kXR_pgread as XRootD does: frames of up
// to frameLen bytes, each page behind its CRC32C; corrupt, when set,
// alters the byte at that offset after its CRC is computed.
func pgServer(t *testing.T, content []byte, frameLen int, corrupt int64) string {
	return fakeServer(t, func(c net.Conn, req *proto.Request) {
		switch req.ID {
		case proto.ReqOpen:
			send(c, req.Stream, proto.StatusOK, []byte{1, 2, 3, 4})
		case proto.ReqPgread:
			off := int64(binary.BigEndian.Uint64(req.Body[4:12]))
			end := min(off+int64(binary.BigEndian.Uint32(req.Body[12:16])), int64(len(content)))
			for {
				n := min(int64(frameLen), end-off)
				var data []byte
				for p := off; p < off+n; {
					pl := min(proto.PgPageSize-p%proto.PgPageSize, off+n-p)
					page := bytes.Clone(content[p : p+pl])
					data = binary.BigEndian.AppendUint32(data, proto.CRC32C(page))
					if corrupt >= p && corrupt < p+pl {
						page[corrupt-p] ^= 0x40
					}
					data = append(data, page...)
					p += pl
				}
				rt := proto.RespPartial
				if off+n == end {
					rt = proto.RespFinal
				}
				info := binary.BigEndian.AppendUint64(nil, uint64(off))
				prefix := proto.PutStatus(make([]byte, proto.StatusPrefixLen+8), req.Stream, proto.ReqPgread, rt, info, len(data))
				c.Write(append(prefix, data...))
				off += n
				if rt == proto.RespFinal {
					return
				}
			}
		default:
			send(c, req.Stream, proto.StatusOK, nil)
		}
	})
}

// With PageChecks a read is a kXR_pgread: unaligned, across frames and
// at the end of the file it returns the bytes the server holds.
func TestPgReadChecksPages(t *testing.T) {
	content := make([]byte, 3*proto.PgPageSize*4+123)
	for i := range content {
		content[i] = byte(rand.IntN(256))
	}
	fs := NewFSOptions(pgServer(t, content, 2*proto.PgPageSize, -1), Options{PageChecks: true})
	defer fs.Close()
	f, err := fs.Open(testCtx(t), "/x")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 20000)
	if n, err := f.ReadAt(buf, 1000); n != len(buf) || err != nil || !bytes.Equal(buf, content[1000:21000]) {
		t.Fatalf("unaligned pgread: %d, %v, same %v", n, err, bytes.Equal(buf[:n], content[1000:1000+n]))
	}
	tail := int64(len(content) - 500)
	if n, err := f.ReadAt(buf, tail); n != 500 || !errors.Is(err, io.EOF) || !bytes.Equal(buf[:n], content[tail:]) {
		t.Fatalf("pgread at the end: %d, %v", n, err)
	}
	bufs := [][]byte{make([]byte, 100), make([]byte, 9000)}
	if err := f.(*File).ReadV(testCtx(t), bufs, []int64{5, 7000}); err != nil || !bytes.Equal(bufs[0], content[5:105]) || !bytes.Equal(bufs[1], content[7000:16000]) {
		t.Fatalf("readv with page checks: %v", err)
	}
}

// A page whose bytes do not match its CRC fails the read with ErrIO
// naming the offset; the connection stays usable.
func TestPgReadMismatchIsAnError(t *testing.T) {
	content := bytes.Repeat([]byte("sitebox!"), 4096)
	fs := NewFSOptions(pgServer(t, content, 1<<20, 10000), Options{PageChecks: true})
	defer fs.Close()
	f, err := fs.Open(testCtx(t), "/x")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(content))
	_, err = f.ReadAt(buf, 0)
	if !errors.Is(err, store.ErrIO) || !strings.Contains(err.Error(), "CRC32C mismatch in the page at offset 8192") {
		t.Fatalf("read of a corrupted page: %v", err)
	}
	if n, err := f.ReadAt(buf[:4096], 0); n != 4096 || err != nil || !bytes.Equal(buf[:4096], content[:4096]) {
		t.Fatalf("read of a good page after the mismatch: %d, %v", n, err)
	}
}

// A server answering kXR_pgread with plain data (no checksums) fails the
// read: it would pass unchecked bytes off as checked ones.
func TestPgReadWithoutChecksumsRefused(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, req *proto.Request) {
		switch req.ID {
		case proto.ReqOpen:
			send(c, req.Stream, proto.StatusOK, []byte{1, 2, 3, 4})
		default:
			send(c, req.Stream, proto.StatusOK, []byte("unchecked"))
		}
	})
	fs := NewFSOptions(addr, Options{PageChecks: true})
	defer fs.Close()
	f, err := fs.Open(testCtx(t), "/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 9), 0); !errors.Is(err, store.ErrIO) || !strings.Contains(err.Error(), "without page checksums") {
		t.Fatalf("pgread answered with kXR_ok: %v", err)
	}
}
