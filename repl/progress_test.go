package repl

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"clink/sql/connector"
)

// TestProgressLineText renders the progress line for fixed samples: the
// bar and bytes of the total, rows/s over the elapsed time, ETA from the
// byte rate, the watermark, nothing when the sources cannot tell, and the
// line cut to the terminal's width.
func TestProgressLineText(t *testing.T) {
	start := time.Unix(1000, 0)
	wm := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	tests := []struct {
		name  string
		s     progressSample
		width int
		want  []string // substrings, in order; nil: the empty line
	}{
		{"unknown", progressSample{FileProgress: connector.FileProgress{Left: 10, Total: 20}}, 100, nil},
		{"half", progressSample{FileProgress: connector.FileProgress{Left: 1 << 20, Total: 2 << 20, Lines: 20000, Known: true}}, 120,
			[]string{"##########.........  50%", "1.0 MiB of 2.0 MiB", "10.0k rows/s", "ETA 2s"}},
		{"watermark", progressSample{FileProgress: connector.FileProgress{Left: 0, Total: 512, Lines: 4, Known: true}, watermark: wm}, 120,
			[]string{"100%", "512 B of 512 B", "2 rows/s", "watermark 2024-05-01 12:00:00.000"}},
		{"kafka", progressSample{kafkaLeft: 250, kafkaKnown: true}, 120, []string{"....... ", "  0%", "0 of 250 records", "0 rows/s"}},
		{"narrow", progressSample{FileProgress: connector.FileProgress{Left: 1 << 20, Total: 2 << 20, Lines: 20000, Known: true}}, 40,
			[]string{" 50%", "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProgressLine(ProgressOptions{Width: tt.width}, start)
			got := p.text(tt.s, start.Add(2*time.Second))
			if tt.want == nil {
				if got != "" {
					t.Fatalf("text = %q, want nothing", got)
				}
				return
			}
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("text = %q, lacks %q (in order)", got, w)
				}
				rest = rest[i+len(w):]
			}
			if w := len([]rune(got)); w > tt.width {
				t.Errorf("text is %d wide, over %d", w, tt.width)
			}
			if strings.Contains(got, "ETA") && tt.s.Left == 0 {
				t.Errorf("finished sample shows an ETA: %q", got)
			}
		})
	}
}

// TestProgressLineKafka: over kafka the total is the largest lag seen,
// and records read are what the lag fell by since.
func TestProgressLineKafka(t *testing.T) {
	start := time.Unix(1000, 0)
	p := newProgressLine(ProgressOptions{Width: 120}, start)
	p.text(progressSample{kafkaLeft: 1000, kafkaKnown: true}, start.Add(time.Second))
	got := p.text(progressSample{kafkaLeft: 250, kafkaKnown: true}, start.Add(3*time.Second))
	for _, want := range []string{" 75%", "750 of 1000 records", "250 rows/s", "ETA 1s"} {
		if !strings.Contains(got, want) {
			t.Errorf("text = %q, lacks %q", got, want)
		}
	}
}

// TestStatusLineFileProgress: the live status line of a query over a csv
// file says how much of the file it has read.
func TestStatusLineFileProgress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		b.WriteString(strings.Repeat("x", i%7) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "w.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := NewShell(Options{Width: func() int { return 300 }, BaseDir: dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if _, err := sh.sess.Exec(ctx, `CREATE TABLE w (s VARCHAR) WITH (connector = 'csv', path = 'w.csv')`); err != nil {
		t.Fatal(err)
	}
	h, err := sh.sess.Query(ctx, `SELECT COUNT(*) FROM w`)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	v := newView(sh, &query{h: h})
	total := humanBytes(int64(b.Len()))
	if want := "read " + total + " of " + total + " (100%)"; !strings.Contains(v.status(), want) {
		t.Fatalf("status %q, want it to show %q", v.status(), want)
	}
}
