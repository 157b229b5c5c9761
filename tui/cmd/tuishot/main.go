// Command tuishot renders a terminal capture (tmux capture-pane -e -p) to a
// PNG, for the dashboard screenshot in docs/tui.png:
//
//	tmux capture-pane -e -p -t SESSION | go run ./tui/cmd/tuishot -o docs/tui.png
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

func main() {
	out := flag.String("o", "tui.png", "output PNG")
	fontPath := flag.String("font", "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "monospace TTF")
	size := flag.Float64("size", 14, "font size in points at 72 dpi")
	flag.Parse()
	if err := run(*out, *fontPath, *size); err != nil {
		fmt.Fprintln(os.Stderr, "tuishot:", err)
		os.Exit(1)
	}
}

// cell is one character with its colours.
type cell struct {
	r      rune
	fg, bg color.Color
	bold   bool
}

var (
	defFG = color.RGBA{0xc0, 0xca, 0xf5, 0xff}
	defBG = color.RGBA{0x1a, 0x1b, 0x26, 0xff}
)

func run(out, fontPath string, size float64) error {
	data, err := os.ReadFile(fontPath)
	if err != nil {
		return err
	}
	f, err := opentype.Parse(data)
	if err != nil {
		return err
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return err
	}
	defer face.Close()
	var rows [][]cell
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rows = append(rows, parseLine(sc.Text()))
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	adv, _ := face.GlyphAdvance('M')
	cw, m := adv.Ceil(), face.Metrics()
	ch := (m.Ascent + m.Descent).Ceil()
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+16, len(rows)*ch+16))
	draw.Draw(img, img.Bounds(), image.NewUniform(defBG), image.Point{}, draw.Src)
	for y, row := range rows {
		for x, c := range row {
			px, py := 8+x*cw, 8+y*ch
			draw.Draw(img, image.Rect(px, py, px+cw, py+ch), image.NewUniform(c.bg), image.Point{}, draw.Src)
			if c.r == ' ' {
				continue
			}
			d := font.Drawer{Dst: img, Src: image.NewUniform(c.fg), Face: face,
				Dot: fixed.P(px, py+m.Ascent.Ceil())}
			d.DrawString(string(c.r))
			if c.bold {
				d.Dot = fixed.P(px+1, py+m.Ascent.Ceil())
				d.DrawString(string(c.r))
			}
		}
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := png.Encode(w, img); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// parseLine splits a captured line into cells, applying SGR sequences.
func parseLine(s string) []cell {
	var cells []cell
	cur := cell{fg: defFG, bg: defBG}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '[' {
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j < len(rs) && rs[j] == 'm' {
				sgr(&cur, string(rs[i+2:j]))
			}
			i = j
			continue
		}
		c := cur
		c.r = rs[i]
		cells = append(cells, c)
	}
	return cells
}

func sgr(c *cell, params string) {
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		n, _ := strconv.Atoi(ps[i])
		switch {
		case n == 0:
			*c = cell{fg: defFG, bg: defBG}
		case n == 1:
			c.bold = true
		case n == 22:
			c.bold = false
		case n >= 30 && n <= 37:
			c.fg = palette(n - 30)
		case n >= 90 && n <= 97:
			c.fg = palette(n - 90 + 8)
		case n == 39:
			c.fg = defFG
		case n == 49:
			c.bg = defBG
		case (n == 38 || n == 48) && i+1 < len(ps):
			var col color.Color
			if ps[i+1] == "5" && i+2 < len(ps) {
				k, _ := strconv.Atoi(ps[i+2])
				col, i = palette(k), i+2
			} else if ps[i+1] == "2" && i+4 < len(ps) {
				r, _ := strconv.Atoi(ps[i+2])
				g, _ := strconv.Atoi(ps[i+3])
				b, _ := strconv.Atoi(ps[i+4])
				col, i = color.RGBA{uint8(r), uint8(g), uint8(b), 0xff}, i+4
			}
			if col != nil && n == 38 {
				c.fg = col
			} else if col != nil {
				c.bg = col
			}
		}
	}
}

// palette is the xterm 256-colour palette.
func palette(k int) color.Color {
	base := []color.RGBA{{0, 0, 0, 255}, {205, 49, 49, 255}, {13, 188, 121, 255}, {229, 229, 16, 255},
		{36, 114, 200, 255}, {188, 63, 188, 255}, {17, 168, 205, 255}, {229, 229, 229, 255},
		{102, 102, 102, 255}, {241, 76, 76, 255}, {35, 209, 139, 255}, {245, 245, 67, 255},
		{59, 142, 234, 255}, {214, 112, 214, 255}, {41, 184, 219, 255}, {255, 255, 255, 255}}
	switch {
	case k < 16:
		return base[max(k, 0)]
	case k < 232:
		k -= 16
		lv := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return color.RGBA{lv(k / 36), lv(k / 6 % 6), lv(k % 6), 255}
	case k < 256:
		g := uint8(8 + 10*(k-232))
		return color.RGBA{g, g, g, 255}
	}
	return defFG
}
