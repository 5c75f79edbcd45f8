package wordcount

import (
	"reflect"
	"testing"
)

func TestCount(t *testing.T) {
	got := Count("The cat saw the dog.")
	want := map[string]int{"the": 2, "cat": 1, "saw": 1, "dog": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Count = %#v, want %#v", got, want)
	}
}

func TestCountPunctuation(t *testing.T) {
	got := Count(`"Hello," she said. Hello!`)
	want := map[string]int{"hello": 2, "she": 1, "said": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Count = %#v, want %#v", got, want)
	}
}

// TestCountWhitespace counts a text laid out the way files are: lines, a
// tab, a blank line, a double space, a trailing newline.
func TestCountWhitespace(t *testing.T) {
	text := "one  two\tthree\nfour\n\nfive six\r\n"
	got := Count(text)
	want := map[string]int{"one": 1, "two": 1, "three": 1, "four": 1, "five": 1, "six": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Count(%q) =\n\t%#v\nwant\n\t%#v", text, got, want)
	}
}

func TestTop(t *testing.T) {
	got := Top("b a b c a b\nc c c", 2)
	want := []string{"c", "b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Top = %q, want %q", got, want)
	}
}
