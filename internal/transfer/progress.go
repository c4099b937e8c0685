package transfer

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/units"
)

// Progress draws a one-line progress bar on w for transfers that last
// longer than a second. A nil *Progress does nothing.
type Progress struct {
	w     io.Writer
	total int64
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	shown bool
}

// NewProgress returns a progress bar writing to w (usually stderr).
func NewProgress(w io.Writer) *Progress { return &Progress{w: w} }

// Start begins timing a transfer of total bytes.
func (p *Progress) Start(total int64) {
	if p == nil {
		return
	}
	p.total, p.start, p.stop = total, time.Now(), make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				if time.Since(p.start) > time.Second {
					p.draw()
				}
			}
		}
	}()
}

// Add counts n more bytes moved.
func (p *Progress) Add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// Done stops the bar, finishing its line if one was drawn.
func (p *Progress) Done() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	if p.shown {
		p.draw()
		fmt.Fprintln(p.w)
	}
}

func (p *Progress) draw() {
	p.shown = true
	done := p.done.Load()
	secs := max(time.Since(p.start).Seconds(), 1e-3)
	pct := 100.0
	if p.total > 0 {
		pct = 100 * float64(done) / float64(p.total)
	}
	const width = 30
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if float64(i) < pct/100*width {
			bar[i] = '='
		}
	}
	fmt.Fprintf(p.w, "\r[%s] %5.1f%% %s of %s  %s/s   ", bar, pct, units.FormatSize(done), units.FormatSize(p.total), units.FormatSize(int64(float64(done)/secs)))
}
