package nexmark

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDeterministicAndResumable(t *testing.T) {
	cfg := Config{Events: 2000, Seed: 7}
	a, b := New(cfg), New(cfg)
	var first []Event
	for {
		ev, ok := a.Next()
		if !ok {
			break
		}
		first = append(first, ev)
	}
	if len(first) != 2000 || a.Position() != 2000 {
		t.Fatalf("bounded stream gave %d events, position %d", len(first), a.Position())
	}
	if err := b.SetPosition(1234); err != nil {
		t.Fatal(err)
	}
	for i := 1234; i < 2000; i++ {
		ev, _ := b.Next()
		if !reflect.DeepEqual(ev, first[i]) {
			t.Fatalf("event %d after resume differs:\n%+v\n%+v", i, ev, first[i])
		}
	}
	other := New(Config{Events: 2000, Seed: 8})
	same := 0
	for i := range 200 {
		ev, _ := other.Next()
		if reflect.DeepEqual(ev, first[i]) {
			same++
		}
	}
	if same == 200 {
		t.Error("seed does not change the stream")
	}
}

func TestEventMixAndIDs(t *testing.T) {
	g := New(Config{Events: 50 * 400})
	counts := map[Kind]int{}
	var lastPerson, lastAuction int64 = FirstPersonID - 1, FirstAuctionID - 1
	var prevTS int64
	hotBids, bids := 0, 0
	for {
		ev, ok := g.Next()
		if !ok {
			break
		}
		counts[ev.Kind]++
		if ev.Timestamp < prevTS {
			t.Fatalf("event %d goes back in time", ev.Index)
		}
		prevTS = ev.Timestamp
		switch ev.Kind {
		case KindPerson:
			if ev.Person.ID != lastPerson+1 {
				t.Fatalf("person id %d after %d", ev.Person.ID, lastPerson)
			}
			lastPerson = ev.Person.ID
		case KindAuction:
			a := ev.Auction
			if a.ID != lastAuction+1 || a.Expires <= a.DateTime || a.Reserve < a.InitialBid ||
				a.Category < FirstCategoryID || a.Category >= FirstCategoryID+NumCategories || a.Seller > lastPerson+personIDLead {
				t.Fatalf("bad auction %+v (last person %d)", a, lastPerson)
			}
			lastAuction = a.ID
		case KindBid:
			b := ev.Bid
			bids++
			if b.Auction == (lastAuction-FirstAuctionID)/hotAuctionRatio*hotAuctionRatio+FirstAuctionID {
				hotBids++
			}
			if b.Auction > lastAuction+auctionIDLead || b.Price < 100 || b.Price > 100_000_000 || !strings.HasPrefix(b.URL, "https://www.nexmark.com/") {
				t.Fatalf("bad bid %+v", b)
			}
		}
	}
	if counts[KindPerson] != 400 || counts[KindAuction] != 1200 || counts[KindBid] != 18400 {
		t.Errorf("event mix %v, want 400/1200/18400", counts)
	}
	// Nominally P(hot auction) = 1 - 1/HotAuctionRatio = 0.5, but the
	// reference seeds java.util.Random with consecutive event ids, whose
	// first draws are correlated: seed 0 yields about 0.37, like the
	// reference. A broken hot-auction rule gives ~0.01 or ~1.
	if frac := float64(hotBids) / float64(bids); frac < 0.3 || frac > 0.6 {
		t.Errorf("hot auction fraction %.3f, want 0.3..0.6", frac)
	}
}

func TestEventTimeAndPrices(t *testing.T) {
	cfg := Config{EventsPerSecond: 1000}.Defaults()
	if got := cfg.EventAt(1500).Timestamp - DefaultBaseTime; got != 1500 {
		t.Errorf("event 1500 at +%d ms, want +1500 at 1000 events/s", got)
	}
	// Prices are log-uniform over 1..10^6 dollars: the median is near $1000.
	var below int
	n := 0
	for i := int64(0); n < 4000; i++ {
		if ev := cfg.EventAt(i); ev.Kind == KindBid {
			n++
			if ev.Bid.Price < 100_000 {
				below++
			}
		}
	}
	if frac := float64(below) / float64(n); math.Abs(frac-0.5) > 0.05 {
		t.Errorf("fraction of bids under $1000 = %.3f, want about 0.5", frac)
	}
}

func TestChannelURL(t *testing.T) {
	// channel_id is |Integer.reverse(n)|, as in the conformance dataset
	// (channel-7568 -> 163053568, channel-9319 -> 433848320).
	for n, want := range map[int32]string{7568: "163053568", 9319: "433848320"} {
		name, url := channelURL(n)
		if strings.Contains(url, "channel_id") && !strings.HasSuffix(url, "&channel_id="+want) {
			t.Errorf("%s url %s, want channel_id=%s", name, url, want)
		}
	}
	ev := Config{}.EventAt(0)
	if ev.Kind != KindPerson || len(ev.Row()) != len(PersonColumns) {
		t.Errorf("event 0 is %v with %d columns", ev.Kind, len(ev.Row()))
	}
}

func TestJavaRandom(t *testing.T) {
	// Reference values of java.util.Random(42): nextInt() is -1170105035,
	// so nextInt(10) is 0 and nextInt(100) is 30.
	if got := newJRand(42).next(32); got != -1170105035 {
		t.Errorf("new Random(42).nextInt() = %d, want -1170105035", got)
	}
	if got := newJRand(42).nextInt(10); got != 0 {
		t.Errorf("new Random(42).nextInt(10) = %d, want 0", got)
	}
	if got := newJRand(42).nextInt(100); got != 30 {
		t.Errorf("new Random(42).nextInt(100) = %d, want 30", got)
	}
}
