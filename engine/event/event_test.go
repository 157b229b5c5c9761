package event

import (
	"slices"
	"testing"
)

func TestBusDeliversOnlyWantedKinds(t *testing.T) {
	var nilBus *Bus
	if nilBus.Enabled() || nilBus.Wants(ReadMiss) {
		t.Fatal("a nil bus listens to nothing")
	}
	nilBus.Emit(Event{Kind: ReadMiss}) // must not panic

	b := NewBus()
	var all, some []Kind
	cancelAll := b.Subscribe(func(e Event) { all = append(all, e.Kind) })
	cancelSome := b.SubscribeKinds(AllKinds&^PerRecord, func(e Event) { some = append(some, e.Kind) })
	for _, k := range []Kind{RecordSubmitted, ReadMiss, ReadHit, EpochReleased} {
		b.Emit(Event{Kind: k})
	}
	if !slices.Equal(all, []Kind{RecordSubmitted, ReadMiss, ReadHit, EpochReleased}) {
		t.Fatalf("all = %v", all)
	}
	if !slices.Equal(some, []Kind{ReadMiss, EpochReleased}) {
		t.Fatalf("filtered = %v", some)
	}
	cancelAll()
	if b.Wants(RecordSubmitted) || !b.Wants(ReadMiss) {
		t.Fatal("after the catch-all left, per-record kinds must be unwanted")
	}
	cancelSome()
	if b.Enabled() {
		t.Fatal("no subscriber left")
	}
}

func TestTailDropsInsteadOfBlocking(t *testing.T) {
	b := NewBus()
	ch, dropped, cancel := b.Tail(2, AllKinds)
	defer cancel()
	for i := 0; i < 5; i++ {
		b.Emit(Event{Kind: Warning})
	}
	if len(ch) != 2 || dropped.Load() != 3 {
		t.Fatalf("buffered %d, dropped %d", len(ch), dropped.Load())
	}
}

func TestKindNamesAndClasses(t *testing.T) {
	for k := RecordSubmitted; k <= Warning; k++ {
		if k.String() == "" || k.Class() == "" {
			t.Fatalf("kind %d has no name or class", k)
		}
	}
	if ReadMiss.Class() != "read" || EpochReleased.Class() != "epoch" || KeyEvicted.Class() != "evict" {
		t.Fatal("wrong classes")
	}
	e := Event{Kind: ReadMiss, Operator: "count", Key: "a", N: 2}
	if got := e.String(); got != "miss op=count/0 key=a n=2" {
		t.Fatalf("String() = %q", got)
	}
}
