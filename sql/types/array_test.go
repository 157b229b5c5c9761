package types

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func arr(vs ...Value) Value { return NewArray(vs) }

func TestArrayFormat(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{arr(), "{}"},
		{arr(NewBigInt(1), NewBigInt(2), NewBigInt(3)), "{1,2,3}"},
		{arr(NewBigInt(1), NullValue), "{1,NULL}"},
		{arr(NewVarchar("a b"), NewVarchar(""), NewVarchar("null"), NewVarchar(`q"\`), NewVarchar("x")), `{"a b","","null","q\"\\",x}`},
		{arr(NewDecimal(150, 2)), "{1.50}"},
		{arr(NewTimestamp(0)), `{"1970-01-01 00:00:00.000"}`},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("String = %s, want %s", got, c.want)
		}
	}
}

func TestArrayEncodings(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []Kind{KindBigInt, KindVarchar, KindDecimal, KindDouble, KindBool}
	var vals []Value
	for range 300 {
		k := kinds[r.IntN(len(kinds))]
		n := r.IntN(4)
		elems := make([]Value, n)
		for i := range elems {
			elems[i] = randValue(r, k)
		}
		vals = append(vals, NewArray(elems))
	}
	for _, v := range vals {
		got, err := DecodeRow(EncodeRow(Row{v, NewBigInt(7)}))
		if err != nil || !bytes.Equal(EncodeRow(got), EncodeRow(Row{v, NewBigInt(7)})) {
			t.Fatalf("value round trip of %s: %v %v", v, got, err)
		}
		k, err := DecodeKey(EncodeKey(Row{v}), nil)
		if err != nil || len(k) != 1 || CompareTotal(k[0], v) != 0 {
			t.Fatalf("key round trip of %s: %v %v", v, k, err)
		}
	}
	for i := 1; i < len(vals); i++ {
		a, b := vals[i-1], vals[i]
		if a.Elems() != nil && b.Elems() != nil && len(a.Elems()) > 0 && len(b.Elems()) > 0 && a.Elems()[0].Kind() != b.Elems()[0].Kind() {
			continue // orders agree within one element type
		}
		c := CompareTotal(a, b)
		kc := bytes.Compare(EncodeKey(Row{a}), EncodeKey(Row{b}))
		if (c < 0) != (kc < 0) || (c == 0) != (kc == 0) {
			t.Fatalf("order of %s vs %s: compare %d, keys %d", a, b, c, kc)
		}
	}
}

func TestArrayCast(t *testing.T) {
	bigs, _ := ArrayOf(BigInt)
	strs, _ := ArrayOf(Varchar)
	for _, c := range []struct {
		in   Value
		to   Type
		want string
		err  bool
	}{
		{NewVarchar("{1, 2 ,NULL}"), bigs, "{1,2,NULL}", false},
		{NewVarchar("{}"), bigs, "{}", false},
		{NewVarchar("[1, null, 3]"), bigs, "{1,NULL,3}", false},
		{NewVarchar(`["a", "b c"]`), strs, `{a,"b c"}`, false},
		{NewVarchar("[[1]]"), bigs, "", true},
		{NewVarchar("[1,"), bigs, "", true},
		{NewVarchar(`{"a,b",c,"NULL"}`), strs, `{"a,b",c,"NULL"}`, false},
		{arr(NewBigInt(1), NewBigInt(2)), strs, "{1,2}", false},
		{arr(NewVarchar("x")), bigs, "", true},
		{NewVarchar("{1,{2}}"), bigs, "", true},
		{NewVarchar("1,2"), bigs, "", true},
		{NewBigInt(1), bigs, "", true},
	} {
		got, err := Cast(c.in, c.to)
		if (err != nil) != c.err || (err == nil && got.String() != c.want) {
			t.Errorf("CAST(%s AS %s) = %s, %v; want %s (error %v)", c.in, c.to, got, err, c.want, c.err)
		}
	}
	if _, err := ArrayOf(bigs); err == nil {
		t.Error("ARRAY<ARRAY<BIGINT>> accepted")
	}
	if s := bigs.String(); s != "ARRAY<BIGINT>" {
		t.Errorf("type renders %s", s)
	}
}

func TestArrayCorruptDecode(t *testing.T) {
	good := EncodeRow(Row{arr(NewBigInt(1), NewVarchar("ab"))})
	for i := 1; i < len(good); i++ {
		if _, err := DecodeRow(good[:i]); err == nil {
			t.Errorf("truncated at %d decoded", i)
		}
	}
	nested := AppendValue(nil, Value{kind: KindArray, s: string(EncodeRow(Row{arr()}))})
	if _, _, err := ReadValue(nested); err == nil {
		t.Error("nested array decoded")
	}
}
