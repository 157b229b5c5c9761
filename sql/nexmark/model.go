package nexmark

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Person is a new user of the auction site.
type Person struct {
	ID                             int64
	Name, EmailAddress, CreditCard string
	City, State                    string
	DateTime                       int64 // ms since the epoch
	Extra                          string
}

// Auction is an item put up for sale.
type Auction struct {
	ID                    int64
	ItemName, Description string
	InitialBid, Reserve   int64
	DateTime, Expires     int64 // ms since the epoch
	Seller, Category      int64
	Extra                 string
}

// Bid is a bid on an auction.
type Bid struct {
	Auction, Bidder, Price int64
	Channel, URL           string
	DateTime               int64 // ms since the epoch
	Extra                  string
}

var (
	usStates    = []string{"az", "ca", "id", "or", "wa", "wy"}
	usCities    = []string{"phoenix", "los angeles", "san francisco", "boise", "portland", "bend", "redmond", "seattle", "kent", "cheyenne"}
	firstNames  = []string{"peter", "paul", "luke", "john", "saul", "vicky", "kate", "julie", "sarah", "deiter", "walter"}
	lastNames   = []string{"shultz", "abrams", "spencer", "white", "bartels", "walton", "smith", "jones", "noris"}
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
	// hotURLs are drawn once, like the reference's static HOT_URLS.
	hotURLs = func() []string {
		out := make([]string, len(hotChannels))
		for i := range out {
			out[i] = baseURL(newJRand(int64(i)))
		}
		return out
	}()
)

// nextString is StringsGenerator.nextString: 3..maxLength-1 letters with
// an occasional special character.
func nextString(r *jrand, maxLength int32, special byte) string {
	n := minStringLength + r.nextInt(maxLength-minStringLength)
	var b strings.Builder
	for ; n > 0; n-- {
		if r.nextInt(13) == 0 {
			b.WriteByte(special)
		} else {
			b.WriteByte(byte('a' + r.nextInt(26)))
		}
	}
	return b.String()
}

func nextExactString(r *jrand, length int) string {
	b := make([]byte, length)
	for i := range b {
		b[i] = byte('a' + r.nextInt(26))
	}
	return string(b)
}

// nextExtra pads a record towards the desired average size.
func nextExtra(r *jrand, currentSize, desiredAverageSize int) string {
	if currentSize > desiredAverageSize {
		return ""
	}
	desiredAverageSize -= currentSize
	delta := int(math.Round(float64(desiredAverageSize) * 0.2))
	size := desiredAverageSize - delta
	if delta != 0 {
		size += int(r.nextInt(int32(2 * delta)))
	}
	return nextExactString(r, size)
}

// nextPrice is PriceGenerator.nextPrice: log-uniform between 1 and 10^6
// dollars, in cents.
func nextPrice(r *jrand) int64 { return int64(math.Round(math.Pow(10, r.nextDouble()*6) * 100)) }

func baseURL(r *jrand) string {
	return "https://www.nexmark.com/" + nextString(r, 5, '_') + "/" + nextString(r, 5, '_') + "/" +
		nextString(r, 5, '_') + "/item.htm?query=1"
}

// channelURL is the reference's cached channel name and URL for a channel
// number: the URL usually carries channel_id = |Integer.reverse(n)|.
func channelURL(n int32) (string, string) {
	r := newJRand(int64(n))
	url := baseURL(r)
	if r.nextInt(10) > 0 {
		id := int32(bits.Reverse32(uint32(n)))
		if id < 0 {
			id = -id
		}
		url = fmt.Sprintf("%s&channel_id=%d", url, id)
	}
	return fmt.Sprintf("channel-%d", n), url
}
