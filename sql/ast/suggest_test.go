package ast

import "testing"

func TestSuggest(t *testing.T) {
	cands := []string{"auction", "price", "bidder", "mode", "date_time", "COUNT", "\\tables", "\\describe", "\\d"}
	for _, tc := range []struct{ name, want string }{
		{"auctoin", "auction"},    // transposition: 2 edits
		{"prise", "price"},        // 1 edit
		{"Price", ""},             // the same name, another case
		{"PRICEE", "price"},       // case-insensitive
		{"date_tme", "date_time"}, // 1 edit in a longer name
		{"xyz", ""},               // nothing close
		{"p", ""},                 // too short to guess
		{"cnt", ""},               // 2 edits from COUNT is too many for 3 letters
		{"count_", "COUNT"},       // keeps the candidate's spelling
		{"\\tabels", "\\tables"},  // commands
		{"\\descirbe", "\\describe"},
		{"\\nope", ""},
		{"nope", ""}, // 2 edits from a 4-letter name is a guess, not a typo
	} {
		if got := Suggest(tc.name, cands); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := DidYouMean("prise", cands); got != " (did you mean price?)" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("xyz", cands); got != "" {
		t.Errorf("DidYouMean(xyz) = %q, want empty", got)
	}
}
