package export

import (
	"reflect"
	"strings"
	"testing"
)

func TestSyntaxTokens(t *testing.T) {
	for _, c := range []struct {
		file, line string
		want       []token
	}{
		{"main.go", `	return fmt.Sprintf("%d // not a comment", 42) // done`, []token{
			{"", "\t"}, {"kw", "return"}, {"", " fmt.Sprintf("}, {"str", `"%d // not a comment"`}, {"", ", "}, {"num", "42"}, {"", ") "}, {"com", "// done"}}},
		{"calc.py", `def add(a, b):  # sum`, []token{{"kw", "def"}, {"", " add(a, b):  "}, {"com", "# sum"}}},
		{"app.ts", `const s = 'it\'s' + x2;`, []token{{"kw", "const"}, {"", " s = "}, {"str", `'it\'s'`}, {"", " + x2;"}}},
		{"run.sh", `if [ -f "$f" ]; then`, []token{{"kw", "if"}, {"", " [ -f "}, {"str", `"$f"`}, {"", " ]; "}, {"kw", "then"}}},
		{"x.go", `s := "unterminated`, []token{{"", "s := "}, {"str", `"unterminated`}}},
		{"x.go", `returned := xreturn`, []token{{"", "returned := xreturn"}}},
	} {
		got := langOf(c.file).tokens(c.line)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q:\n got %q\nwant %q", c.file, c.line, got, c.want)
		}
		var b strings.Builder
		for _, tk := range got {
			b.WriteString(tk.Text)
		}
		if b.String() != c.line {
			t.Errorf("%s: tokens join to %q, want the line %q", c.file, b.String(), c.line)
		}
	}
	if langOf("README") != nil || langOf("dir.go/file") != nil {
		t.Error("a file without a known extension has a language")
	}
}

func TestDiffLines(t *testing.T) {
	got := diffLines("a.go", "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-var x = 1\n+var x = 2\n \n")
	classes := []string{}
	for _, l := range got {
		classes = append(classes, l.Class)
	}
	if want := []string{"file", "file", "hunk", "del", "add", "ctx"}; !reflect.DeepEqual(classes, want) {
		t.Fatalf("classes %v, want %v", classes, want)
	}
	if add := got[4]; add.Marker != "+" || len(add.Tokens) == 0 || add.Tokens[0] != (token{"kw", "var"}) {
		t.Errorf("added line %+v, want marker + and keyword var first", add)
	}
	if txt := diffLines("notes.txt", "+var x\n")[0]; len(txt.Tokens) != 1 || txt.Tokens[0] != (token{"", "var x"}) {
		t.Errorf("a text file's line is tokenised: %+v", txt)
	}
}
