package postgres

import (
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// fold removes diacritics ("café naïve" -> "cafe naive"), for the text
// that is indexed and the text that is searched alike: PostgreSQL's
// configurations keep accents, and unaccent is an extension a server may
// not allow.
func fold(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return s
	}
	return out
}

// words are a query's words: runs of letters and digits, folded. Anything
// else — quotes, operators of tsquery syntax — separates words, so no
// query text is ever parsed as syntax.
func words(text string) []string {
	return strings.FieldsFunc(fold(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
