package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows how far a long task got: a progress bar on a terminal, a plain line every
// few seconds otherwise (logs, CI).
type progress struct {
	bar   *progressbar.ProgressBar
	w     io.Writer
	label string
	last  time.Time
	n     int
}

func newProgress(w io.Writer, total int, label string) *progress {
	p := &progress{w: w, label: label, last: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	return p
}

// set records that n items are done.
func (p *progress) set(n int) {
	p.n = n
	if p.bar != nil {
		_ = p.bar.Set(n)
		return
	}
	if time.Since(p.last) >= 2*time.Second {
		p.last = time.Now()
		fmt.Fprintf(p.w, "%s: %d\n", p.label, n)
	}
}

func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
