// Package typo finds the name a mistyped word was meant to be, so that an
// error about an unknown name can say "did you mean". It reads nothing
// and keeps nothing: the candidates, and the error's words, are the
// caller's.
package typo

import "strings"

// Closest returns the one candidate closest to word, if it is close enough
// to be a typo of it (ignoring case) or the only one word begins (--prio
// for --priority), and "" when none or several are.
func Closest(word string, candidates []string) string {
	var starts []string
	for _, c := range candidates {
		if len([]rune(word)) >= 2 && strings.HasPrefix(strings.ToLower(c), strings.ToLower(word)) {
			starts = append(starts, c)
		}
	}
	if len(starts) == 1 {
		return starts[0]
	}
	return typoOf(word, candidates)
}

func typoOf(word string, candidates []string) string {
	best, bestDist, ties := "", 0, 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		switch {
		case best == "" || d < bestDist:
			best, bestDist, ties = c, d, 1
		case d == bestDist:
			ties++
		}
	}
	if best == "" || ties > 1 || bestDist > max(1, len([]rune(word))/3) {
		return ""
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of neighbours that turn a into b.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
