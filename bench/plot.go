package bench

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotSweep draws records/s against latency, one line per mode, on a log
// y axis, and saves it as a PNG at path.
func plotSweep(pts []SweepPoint, path string) error {
	p := plot.New()
	p.Title.Text = "clink bench sweep: throughput vs remote read latency (hot budget ~0)"
	p.X.Label.Text = "remote read latency (ms)"
	p.Y.Label.Text = "records/s (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = false
	colors := []color.Color{color.RGBA{R: 200, A: 255}, color.RGBA{B: 200, A: 255}, color.RGBA{G: 140, A: 255}}
	modes := []string{}
	byMode := map[string]plotter.XYs{}
	for _, pt := range pts {
		if _, ok := byMode[pt.Mode]; !ok {
			modes = append(modes, pt.Mode)
		}
		byMode[pt.Mode] = append(byMode[pt.Mode], plotter.XY{
			X: float64(pt.Latency.Microseconds()) / 1000, Y: math.Max(pt.Rate, 1)})
	}
	for i, m := range modes {
		line, points, err := plotter.NewLinePoints(byMode[m])
		if err != nil {
			return fmt.Errorf("sweep plot %s: %w", m, err)
		}
		c := colors[i%len(colors)]
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(m, line, points)
	}
	p.Add(plotter.NewGrid())
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("save sweep plot: %w", err)
	}
	return nil
}
