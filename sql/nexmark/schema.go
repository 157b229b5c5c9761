package nexmark

import (
	"fmt"

	"clink/sql/expr"
	"clink/sql/types"
)

// Schemas of the three tables, with the conformance suite's column names
// (TIMESTAMP columns are TIMESTAMP(3)).
var (
	PersonColumns = []expr.Column{
		{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.Varchar},
		{Name: "email_address", Type: types.Varchar}, {Name: "credit_card", Type: types.Varchar},
		{Name: "city", Type: types.Varchar}, {Name: "state", Type: types.Varchar},
		{Name: "date_time", Type: types.Timestamp}, {Name: "extra", Type: types.Varchar},
	}
	AuctionColumns = []expr.Column{
		{Name: "id", Type: types.BigInt}, {Name: "item_name", Type: types.Varchar},
		{Name: "description", Type: types.Varchar}, {Name: "initial_bid", Type: types.BigInt},
		{Name: "reserve", Type: types.BigInt}, {Name: "date_time", Type: types.Timestamp},
		{Name: "expires", Type: types.Timestamp}, {Name: "seller", Type: types.BigInt},
		{Name: "category", Type: types.BigInt}, {Name: "extra", Type: types.Varchar},
	}
	BidColumns = []expr.Column{
		{Name: "auction", Type: types.BigInt}, {Name: "bidder", Type: types.BigInt},
		{Name: "price", Type: types.BigInt}, {Name: "channel", Type: types.Varchar},
		{Name: "url", Type: types.Varchar}, {Name: "date_time", Type: types.Timestamp},
		{Name: "extra", Type: types.Varchar},
	}
)

// Columns returns the schema of table "person", "auction" or "bid".
func Columns(table string) ([]expr.Column, error) {
	switch table {
	case "person":
		return PersonColumns, nil
	case "auction":
		return AuctionColumns, nil
	case "bid":
		return BidColumns, nil
	}
	return nil, fmt.Errorf("nexmark: unknown table %q (want person, auction or bid)", table)
}

// Row renders the event as a row of its table's schema.
func (e Event) Row() types.Row {
	switch e.Kind {
	case KindPerson:
		p := e.Person
		return types.Row{types.NewBigInt(p.ID), types.NewVarchar(p.Name), types.NewVarchar(p.EmailAddress),
			types.NewVarchar(p.CreditCard), types.NewVarchar(p.City), types.NewVarchar(p.State),
			types.NewTimestamp(p.DateTime), types.NewVarchar(p.Extra)}
	case KindAuction:
		a := e.Auction
		return types.Row{types.NewBigInt(a.ID), types.NewVarchar(a.ItemName), types.NewVarchar(a.Description),
			types.NewBigInt(a.InitialBid), types.NewBigInt(a.Reserve), types.NewTimestamp(a.DateTime),
			types.NewTimestamp(a.Expires), types.NewBigInt(a.Seller), types.NewBigInt(a.Category),
			types.NewVarchar(a.Extra)}
	}
	b := e.Bid
	return types.Row{types.NewBigInt(b.Auction), types.NewBigInt(b.Bidder), types.NewBigInt(b.Price),
		types.NewVarchar(b.Channel), types.NewVarchar(b.URL), types.NewTimestamp(b.DateTime),
		types.NewVarchar(b.Extra)}
}
