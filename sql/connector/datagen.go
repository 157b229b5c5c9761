package connector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"clink/sql/types"
)

// genSpec is one column's generator: a sequence (min + i*step) or random
// values in [min, max] (strings of the given length), NULL with null_rate.
type genSpec struct {
	random   bool
	min, max float64
	step     float64
	length   int
	nullRate float64
}

// datagenReader makes row i from (seed, i) alone, so its position is the
// row index and a restore regenerates exactly the same rows.
type datagenReader struct {
	t     *Table
	specs []genSpec
	rows  int64
	seed  uint64
	i     int64
}

var datagenBase = float64(time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC).UnixMilli())

func openDatagen(t *Table, _ Env) (rowReader, error) {
	rows, err := t.IntOpt("rows", 0)
	if err != nil {
		return nil, err
	}
	seed, err := t.IntOpt("seed", 0)
	if err != nil {
		return nil, err
	}
	r := &datagenReader{t: t, rows: rows, seed: uint64(seed)}
	for _, c := range t.Columns {
		s, err := columnSpec(t, c.Name, c.Type)
		if err != nil {
			return nil, err
		}
		r.specs = append(r.specs, s)
	}
	return r, nil
}

func columnSpec(t *Table, col string, typ types.Type) (genSpec, error) {
	p := "fields." + strings.ToLower(col) + "."
	if typ.Kind == types.KindArray {
		return genSpec{}, fmt.Errorf("table %s: column %s: datagen does not generate %s values", t.Name, col, typ)
	}
	s := genSpec{random: true, max: 1000, step: 1, length: 8}
	if typ.Kind == types.KindTimestamp {
		s = genSpec{min: datagenBase, max: datagenBase + 3600e3, step: 1000}
	}
	kind, _ := t.Opt(p + "kind")
	switch strings.ToLower(kind) {
	case "", "random":
		s.random = kind != "" || typ.Kind != types.KindTimestamp
	case "sequence":
		s.random = false
	default:
		return s, t.OptErr(p+"kind", "want 'random' or 'sequence', got %q", kind)
	}
	for _, f := range []struct {
		key string
		dst *float64
	}{{"min", &s.min}, {"max", &s.max}, {"step", &s.step}, {"null_rate", &s.nullRate}} {
		v, ok := t.Opt(p + f.key)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil && typ.Kind == types.KindTimestamp {
			var ms int64
			ms, err = types.ParseTimestamp(v)
			n = float64(ms)
		}
		if err != nil {
			return s, t.OptErr(p+f.key, "want a number, got %q", v)
		}
		*f.dst = n
	}
	l, err := t.IntOpt(p+"length", int64(s.length))
	s.length = int(l)
	return s, err
}

func (r *datagenReader) next() (types.Row, bool, bool, error) {
	if r.rows > 0 && r.i >= r.rows {
		return nil, false, true, nil
	}
	rng := rand.New(rand.NewPCG(r.seed, uint64(r.i)))
	row := make(types.Row, len(r.specs))
	for c, s := range r.specs {
		v, err := s.value(rng, r.i, r.t.Columns[c].Type)
		if err != nil {
			return nil, false, false, fmt.Errorf("column %s: %w", r.t.Columns[c].Name, err)
		}
		row[c] = v
	}
	r.i++
	return row, true, false, nil
}

func (s genSpec) value(rng *rand.Rand, i int64, typ types.Type) (types.Value, error) {
	if s.nullRate > 0 && rng.Float64() < s.nullRate {
		return types.NullValue, nil
	}
	x, u := s.min+float64(i)*s.step, 0.0
	if s.random {
		u = rng.Float64()
		x = s.min + u*(s.max-s.min)
	}
	switch typ.Kind {
	case types.KindVarchar:
		if !s.random {
			return types.NewVarchar(strconv.FormatInt(int64(x), 10)), nil
		}
		b := make([]byte, s.length)
		for k := range b {
			b[k] = byte('a' + rng.IntN(26))
		}
		return types.NewVarchar(string(b)), nil
	case types.KindBool:
		return types.NewBool(rng.IntN(2) == 1), nil
	case types.KindTimestamp:
		return types.NewTimestamp(int64(x)), nil
	case types.KindDouble:
		return types.NewDouble(x), nil
	}
	if s.random && typ.Kind != types.KindDecimal {
		x = uniformInt(s.min, s.max, u)
	}
	return types.Cast(types.NewDouble(x), typ)
}

// uniformInt maps u in [0, 1) onto the integers in [min, max], each
// equally likely (rounding min + u*(max-min) would give the two ends half
// the weight of the others).
func uniformInt(min, max, u float64) float64 {
	lo, hi := math.Ceil(min), math.Floor(max)
	if hi < lo {
		return lo
	}
	return math.Min(lo+math.Floor(u*(hi-lo+1)), hi)
}

func (r *datagenReader) position() []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(r.i))
}

func (r *datagenReader) seek(pos []byte) error {
	if len(pos) != 8 {
		return errors.New("datagen position: want 8 bytes")
	}
	r.i = int64(binary.BigEndian.Uint64(pos))
	return nil
}

func (r *datagenReader) close() error { return nil }
