package nexmark

import (
	"fmt"
	"strings"
)

// Kind says which stream an event belongs to.
type Kind uint8

// Event kinds.
const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

// String returns the table name: person, auction or bid.
func (k Kind) String() string { return [...]string{"person", "auction", "bid"}[k] }

// Event is one generated event: exactly one of Person, Auction, Bid is set.
type Event struct {
	Index     int64 // position in the stream (0-based)
	Kind      Kind
	Timestamp int64 // event time, ms
	Person    *Person
	Auction   *Auction
	Bid       *Bid
}

// Generator produces events in order. Its position (the index of the next
// event) is all a checkpoint needs to resume it.
type Generator struct {
	cfg Config
	pos int64
}

// New returns a generator at position 0.
func New(cfg Config) *Generator { return &Generator{cfg: cfg.Defaults()} }

// Config returns the effective configuration (defaults filled in).
func (g *Generator) Config() Config { return g.cfg }

// Position is the index of the next event.
func (g *Generator) Position() int64 { return g.pos }

// SetPosition moves the generator so that the next event has index pos.
func (g *Generator) SetPosition(pos int64) error {
	if pos < 0 || (g.cfg.Events > 0 && pos > g.cfg.Events) {
		return fmt.Errorf("nexmark: position %d outside stream of %d events", pos, g.cfg.Events)
	}
	g.pos = pos
	return nil
}

// Next returns the next event; ok is false once a bounded stream ends.
func (g *Generator) Next() (ev Event, ok bool) {
	if g.cfg.Events > 0 && g.pos >= g.cfg.Events {
		return Event{}, false
	}
	ev = g.cfg.EventAt(g.pos)
	g.pos++
	return ev, true
}

// EventAt generates event number n; it is a pure function of the
// configuration and n (random access, so resuming costs nothing).
func (c Config) EventAt(n int64) Event {
	c = c.Defaults()
	eventID := c.adjustedEventNumber(n)
	ts := c.timestampFor(n)
	r := newJRand(eventID ^ c.Seed*0x5851F42D4C957F2D)
	ev := Event{Index: n, Timestamp: ts}
	switch rem := eventID % c.totalProportion(); {
	case rem < c.PersonProportion:
		ev.Kind, ev.Person = KindPerson, c.person(eventID, r, ts)
	case rem < c.PersonProportion+c.AuctionProportion:
		ev.Kind, ev.Auction = KindAuction, c.auction(n, eventID, r, ts)
	default:
		ev.Kind, ev.Bid = KindBid, c.bid(eventID, r, ts)
	}
	return ev
}

func (c *Config) person(eventID int64, r *jrand, ts int64) *Person {
	p := &Person{ID: c.lastBase0PersonID(eventID) + FirstPersonID, DateTime: ts}
	p.Name = firstNames[r.nextInt(int32(len(firstNames)))] + " " + lastNames[r.nextInt(int32(len(lastNames)))]
	p.EmailAddress = nextString(r, 7, ' ') + "@" + nextString(r, 5, ' ') + ".com"
	cc := make([]string, 4)
	for i := range cc {
		cc[i] = fmt.Sprintf("%04d", r.nextInt(10000))
	}
	p.CreditCard = strings.Join(cc, " ")
	p.City = usCities[r.nextInt(int32(len(usCities)))]
	p.State = usStates[r.nextInt(int32(len(usStates)))]
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = nextExtra(r, size, c.AvgPersonByteSize)
	return p
}

func (c *Config) auction(n, eventID int64, r *jrand, ts int64) *Auction {
	a := &Auction{ID: c.lastBase0AuctionID(eventID) + FirstAuctionID, DateTime: ts}
	if r.nextInt(c.HotSellersRatio) > 0 {
		a.Seller = (c.lastBase0PersonID(eventID) / hotSellerRatio) * hotSellerRatio
	} else {
		a.Seller = c.nextBase0PersonID(eventID, r)
	}
	a.Seller += FirstPersonID
	a.Category = FirstCategoryID + int64(r.nextInt(NumCategories))
	a.InitialBid = nextPrice(r)
	a.Expires = ts + c.auctionLengthMs(n, r, ts)
	a.ItemName = nextString(r, 20, ' ')
	a.Description = nextString(r, 100, ' ')
	a.Reserve = a.InitialBid + nextPrice(r)
	size := 8 + len(a.ItemName) + len(a.Description) + 8 + 8 + 8 + 8 + 8
	a.Extra = nextExtra(r, size, c.AvgAuctionByteSize)
	return a
}

// auctionLengthMs draws a length averaging the time until
// NumInFlightAuctions more auctions will have been generated.
func (c *Config) auctionLengthMs(n int64, r *jrand, ts int64) int64 {
	current := c.adjustedEventNumber(n)
	eventsForAuctions := (c.NumInFlightAuctions * c.totalProportion()) / c.AuctionProportion
	horizon := c.timestampFor(current+eventsForAuctions) - ts
	return 1 + r.nextLongN(max(horizon*2, 1))
}

func (c *Config) bid(eventID int64, r *jrand, ts int64) *Bid {
	b := &Bid{DateTime: ts}
	if r.nextInt(c.HotAuctionRatio) > 0 {
		b.Auction = (c.lastBase0AuctionID(eventID) / hotAuctionRatio) * hotAuctionRatio
	} else {
		b.Auction = c.nextBase0AuctionID(eventID, r)
	}
	b.Auction += FirstAuctionID
	if r.nextInt(c.HotBiddersRatio) > 0 {
		b.Bidder = (c.lastBase0PersonID(eventID)/hotBidderRatio)*hotBidderRatio + 1
	} else {
		b.Bidder = c.nextBase0PersonID(eventID, r)
	}
	b.Bidder += FirstPersonID
	b.Price = nextPrice(r)
	if r.nextInt(hotChannelRatio) > 0 {
		i := r.nextInt(int32(len(hotChannels)))
		b.Channel, b.URL = hotChannels[i], hotURLs[i]
	} else {
		b.Channel, b.URL = channelURL(r.nextInt(channelsNumber))
	}
	b.Extra = nextExtra(r, 32, c.AvgBidByteSize)
	return b
}
