package postgres

import "github.com/openrath/rath/memory/internal/text"

// fold removes diacritics ("café naïve" -> "cafe naive"), for the text
// that is indexed and the text that is searched alike: PostgreSQL's
// configurations keep accents, and unaccent is an extension a server may
// not allow.
func fold(s string) string { return text.Fold(s) }

// words are a query's words: runs of letters and digits, folded. Anything
// else — quotes, operators of tsquery syntax — separates words, so no
// query text is ever parsed as syntax.
func words(s string) []string { return text.Words(s) }
