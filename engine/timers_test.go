package engine

import (
	"testing"

	"clink/state"
)

func TestTimersDueKeysOnly(t *testing.T) {
	be, err := state.NewMemoryBackend(state.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := NewTimers(be, 7)
	for _, r := range []struct {
		key string
		ts  int64
	}{{"a", 10}, {"b", 20}, {"a", 5}, {"a", 10}, {"c", 30}, {"b", 8}} {
		if err := tm.Register([]byte(r.key), r.ts); err != nil {
			t.Fatal(err)
		}
	}
	if tm.Len() != 5 {
		t.Fatalf("Len = %d, want 5 (a duplicate registration is a no-op)", tm.Len())
	}
	due, err := tm.Due(10)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, d := range due {
		got += string(d.Key) + ":" + itoa(d.Max) + " "
	}
	if got != "a:10 b:8 " {
		t.Fatalf("due at 10 = %q, want a:10 b:8", got)
	}
	if v, ok, _ := be.Get(7|TimerOpBit, []byte("a")); ok {
		t.Fatalf("a's timers still persisted: %x", v)
	}
	v, ok, _ := be.Get(7|TimerOpBit, []byte("b"))
	if !ok {
		t.Fatal("b's remaining timer not persisted")
	}
	re := NewTimers(be, 7)
	if err := re.Load([]byte("b"), v); err != nil {
		t.Fatal(err)
	}
	if ts, _ := re.Next(); ts != 20 {
		t.Fatalf("restored next = %d, want 20", ts)
	}
	if due, _ := tm.Due(25); len(due) != 1 || string(due[0].Key) != "b" {
		t.Fatalf("due at 25 = %v, want only b", due)
	}
	if n, _ := tm.Next(); n != 30 || tm.Len() != 1 {
		t.Fatalf("left %d timers, next %d; want c at 30", tm.Len(), n)
	}
}

func itoa(n int64) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
