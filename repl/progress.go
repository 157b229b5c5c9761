package repl

import (
	"fmt"
	"io"
	"sync"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/lipgloss/v2"

	"clink/sql/connector"
	"clink/sql/session"
	"clink/sql/types"
)

// ProgressOptions turn on `clink run`'s progress line: W is the terminal
// it is drawn on (stderr, only when that is a terminal), Width that
// terminal's width, Color whether the bar may use colours.
type ProgressOptions struct {
	W     io.Writer
	Width int
	Color bool
}

// progressEvery is how often the progress line is redrawn.
const progressEvery = 100 * time.Millisecond

// progressSample is what one redraw reads from the query.
type progressSample struct {
	connector.FileProgress
	// kafkaLeft is the kafka sources' lag summed over partitions
	// (kafkaKnown: the query reads kafka and its sources have polled).
	kafkaLeft  int64
	kafkaKnown bool
	watermark  int64
}

// progressLine draws one query's progress on a terminal: a bar of the
// file bytes read of the total (what the sources had left when they
// opened their files), the lines they read per second, ETA and the
// watermark; over kafka sources (no file), the records read of the
// largest consumer lag seen. It is redrawn in place (\r, erase to end of line)
// and erased at the end, and erased before any result text is written
// to the same terminal (guard), so rows never land on its line.
type progressLine struct {
	o     ProgressOptions
	bar   progress.Model
	start time.Time
	total int64
	shown bool
}

// newProgressLine returns a progress line started now.
func newProgressLine(o ProgressOptions, now time.Time) *progressLine {
	bar := progress.New(progress.WithWidth(24))
	if !o.Color {
		bar = progress.New(progress.WithWidth(24), progress.WithFillCharacters('#', '.'))
		bar.FullColor, bar.EmptyColor = lipgloss.NoColor{}, lipgloss.NoColor{}
	}
	return &progressLine{o: o, bar: bar, start: now}
}

// text renders the line for sample s taken at now; "" when the query's
// sources cannot say how much is left.
func (p *progressLine) text(s progressSample, now time.Time) string {
	secs := max(now.Sub(p.start).Seconds(), 0.001)
	var left, read int64
	var amount, rows string
	switch {
	case s.Known:
		p.total = max(p.total, s.Total, s.Left)
		left, read = s.Left, p.total-s.Left
		amount = humanBytes(read) + " of " + humanBytes(p.total)
		rows = humanCount(float64(s.Lines)/secs) + " rows/s"
	case s.kafkaKnown:
		// records: the total is the most lag seen (the backlog at start)
		p.total = max(p.total, s.kafkaLeft)
		left, read = s.kafkaLeft, p.total-s.kafkaLeft
		amount = fmt.Sprintf("%d of %d records", read, p.total)
		rows = humanCount(float64(read)/secs) + " rows/s"
	default:
		return ""
	}
	frac := 1.0
	if p.total > 0 {
		frac = float64(read) / float64(p.total)
	}
	line := fmt.Sprintf("%s %s · %s", p.bar.ViewAs(frac), amount, rows)
	if rate := float64(read) / secs; rate > 0 && left > 0 {
		line += " · ETA " + time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second).String()
	}
	if wm := s.watermark; wm > 0 && wm < 1<<62 {
		line += " · watermark " + time.UnixMilli(wm).UTC().Format(types.TimestampLayout)
	}
	return clip(line, max(p.o.Width-1, 10))
}

// draw redraws the line for s.
func (p *progressLine) draw(s progressSample, now time.Time) {
	line := p.text(s, now)
	if line == "" {
		return
	}
	fmt.Fprint(p.o.W, "\r"+line+"\x1b[K")
	p.shown = true
}

// erase removes the line, if it is shown.
func (p *progressLine) erase() {
	if p.shown {
		fmt.Fprint(p.o.W, "\r\x1b[K")
		p.shown = false
	}
}

// sampleHandle reads h's progress.
func sampleHandle(h *session.Handle) progressSample {
	s := progressSample{FileProgress: h.FileProgress(), watermark: h.Watermark()}
	for _, l := range h.KafkaLag() {
		s.kafkaLeft += l.Records
		s.kafkaKnown = true
	}
	return s
}

// guardedWriter erases the progress line before each write to the
// result's writer (under the run's lock).
type guardedWriter struct {
	w io.Writer
	p *progressLine
}

func (g guardedWriter) Write(b []byte) (int, error) {
	g.p.erase()
	return g.w.Write(b)
}

// drawProgress redraws p from h every progressEvery under mu until the
// returned stop is called, which erases the line.
func drawProgress(mu *sync.Mutex, p *progressLine, h *session.Handle) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				mu.Lock()
				p.draw(sampleHandle(h), now)
				mu.Unlock()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		mu.Lock()
		p.erase()
		mu.Unlock()
	}
}

// fileProgressNote is the live status line's share of the progress
// line: "read 1.2 MiB of 3.6 MiB (33%)" ("" when the sources cannot tell).
func fileProgressNote(p connector.FileProgress) string {
	if !p.Known || p.Total <= 0 {
		return ""
	}
	read := max(p.Total-p.Left, 0)
	return fmt.Sprintf("read %s of %s (%d%%)", humanBytes(read), humanBytes(p.Total), read*100/p.Total)
}

// humanBytes renders n bytes in B, KiB, MiB or GiB.
func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

// humanCount renders a rate with a k / M suffix.
func humanCount(v float64) string {
	switch {
	case v < 1e4:
		return fmt.Sprintf("%.0f", v)
	case v < 1e6:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.1fM", v/1e6)
}
