// Package text holds how the memory backends read text alike: diacritics
// folded away and words split on everything that is not a letter or a
// digit, so that no query is ever parsed as syntax.
package text

import (
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Fold removes diacritics ("café naïve" -> "cafe naive"), for the text
// that is indexed and the text that is searched alike.
func Fold(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return s
	}
	return out
}

// Words are s's runs of letters and digits, folded; anything else
// separates words.
func Words(s string) []string {
	return strings.FieldsFunc(Fold(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Terms are s's words in lower case: what a lexical index holds and a
// lexical query looks for.
func Terms(s string) []string {
	ws := Words(s)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return ws
}
