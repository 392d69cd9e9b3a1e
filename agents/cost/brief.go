package cost

import "fmt"

// Brief is the totals in a few characters, for a table cell: dollars when
// every turn had a price, tokens when none had, so a figure never claims
// more than is known.
func (t Totals) Brief() string {
	switch {
	case t.Turns == 0:
		return "-"
	case t.Unpriced == 0:
		return fmt.Sprintf("$%.2f", t.CostUSD)
	case t.Unpriced == t.Turns:
		return Tokens(t.Tokens()) + " tok"
	default:
		return fmt.Sprintf("$%.2f+%d unpriced", t.CostUSD, t.Unpriced)
	}
}

// Tokens writes a count of tokens the way people read one: 950, 12.3k,
// 4.1M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprint(n)
	}
}
