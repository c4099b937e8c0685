package fleet

import (
	"crypto/rand"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ProbePath serves throughput probes: GET ProbePath?bytes=N streams N
// bytes (at most 1 GiB) that mean nothing.
const ProbePath = APIPrefix + "probe"

// ProbeResult is one throughput probe a box made to another box of the
// fleet: it read Bytes from To's probe endpoint at MBps.
type ProbeResult struct {
	To    string    `json:"to"` // the probed box's name
	At    time.Time `json:"at"`
	Bytes int64     `json:"bytes"`
	MBps  float64   `json:"mbps"` // 0 with Error set when it failed
	Error string    `json:"error,omitempty"`
}

// ProbeHandler answers throughput probes. The block it repeats is
// random, so compression on the way cannot flatter the figure, and made
// at the first probe, not at the start of every sitebox command.
type ProbeHandler struct {
	block func() []byte
}

// NewProbeHandler returns the handler a box mounts at ProbePath.
func NewProbeHandler() *ProbeHandler {
	return &ProbeHandler{block: sync.OnceValue(func() []byte {
		b := make([]byte, 1<<20)
		rand.Read(b)
		return b
	})}
}

func (p *ProbeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
	if err != nil || n <= 0 || n > 1<<30 {
		http.Error(w, "bytes must be a number from 1 to 1073741824", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	block := p.block()
	for n > 0 {
		m := min(n, int64(len(block)))
		if _, err := w.Write(block[:m]); err != nil {
			return
		}
		n -= m
	}
}
