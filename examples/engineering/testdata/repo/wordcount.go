// Package wordcount counts the words of a text.
package wordcount

import (
	"sort"
	"strings"
)

// punctuation is stripped from both ends of a word.
const punctuation = ".,;:!?\"'()[]"

// Count returns how many times each word occurs in text. Words are
// separated by white space, compared without regard to case and reported
// in lower case; the punctuation around a word is not part of it.
func Count(text string) map[string]int {
	counts := map[string]int{}
	for _, w := range strings.Split(text, " ") {
		w = strings.ToLower(strings.Trim(w, punctuation))
		counts[w]++
	}
	return counts
}

// Top returns the n most frequent words of text, the most frequent first;
// words as frequent as each other are in alphabetical order.
func Top(text string, n int) []string {
	counts := Count(text)
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	if n < len(words) {
		words = words[:n]
	}
	return words
}
