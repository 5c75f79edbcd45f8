package export

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is a run of source text with its syntax class: "kw" (keyword),
// "str" (string literal), "num" (number), "com" (comment), or "" (plain).
type token struct {
	Class, Text string
}

// lang is what the tokeniser knows of a language: its keywords, how its
// line comments start, and which quotes delimit its strings.
type lang struct {
	keywords map[string]bool
	comments []string
	quotes   string
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// langs are the languages diffs are coloured for, by file extension.
var langs = func() map[string]*lang {
	goLang := &lang{keywords: words(`break case chan const continue default defer else fallthrough for func go goto if
		import interface map package range return select struct switch type var nil true false iota`), comments: []string{"//"}, quotes: "\"'`"}
	py := &lang{keywords: words(`and as assert async await break class continue def del elif else except finally for from
		global if import in is lambda nonlocal not or pass raise return try while with yield None True False self`), comments: []string{"#"}, quotes: `"'`}
	js := &lang{keywords: words(`async await break case catch class const continue default delete do else export extends
		finally for function if import in instanceof let new of return switch this throw try typeof var void while yield
		null undefined true false interface type`), comments: []string{"//"}, quotes: "\"'`"}
	sh := &lang{keywords: words(`if then else elif fi for while do done case esac function in return export local set`), comments: []string{"#"}, quotes: `"'`}
	rs := &lang{keywords: words(`as break const continue crate else enum extern false fn for if impl in let loop match mod
		move mut pub ref return self Self static struct super trait true type unsafe use where while`), comments: []string{"//"}, quotes: `"`}
	c := &lang{keywords: words(`auto break case char const continue default do double else enum extern float for goto if
		int long register return short signed sizeof static struct switch typedef union unsigned void volatile while
		bool class namespace new delete public private protected template this true false nullptr`), comments: []string{"//"}, quotes: `"'`}
	return map[string]*lang{
		".go": goLang, ".py": py, ".js": js, ".mjs": js, ".ts": js, ".tsx": js, ".jsx": js,
		".sh": sh, ".bash": sh, ".rs": rs, ".c": c, ".h": c, ".cc": c, ".cpp": c, ".hpp": c, ".java": c,
	}
}()

// langOf returns the language of a file by its extension, or nil.
func langOf(file string) *lang {
	i := strings.LastIndexAny(file, "./")
	if i < 0 || file[i] != '.' {
		return nil
	}
	return langs[strings.ToLower(file[i:])]
}

// tokens splits one line of source into classed runs. It knows one line
// at a time, as a diff shows code: a string or block comment that spans
// lines is coloured as plain text after its first line.
func (l *lang) tokens(line string) []token {
	var out []token
	plain := 0 // start of the pending plain run
	flush := func(i int) {
		if i > plain {
			out = append(out, token{"", line[plain:i]})
		}
	}
	for i := 0; i < len(line); {
		rest := line[i:]
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case l.comment(rest):
			flush(i)
			out = append(out, token{"com", rest})
			return out
		case strings.ContainsRune(l.quotes, r):
			j := i + size
			for j < len(line) && line[j] != byte(r) {
				if line[j] == '\\' && r != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			flush(i)
			out = append(out, token{"str", line[i:j]})
			i, plain = j, j
		case unicode.IsDigit(r) && (i == 0 || !isWord(line[i-1])):
			j := i
			for j < len(line) && (isWord(line[j]) || line[j] == '.') {
				j++
			}
			flush(i)
			out = append(out, token{"num", line[i:j]})
			i, plain = j, j
		case isWord(line[i]):
			j := i
			for j < len(line) && isWord(line[j]) {
				j++
			}
			if l.keywords[line[i:j]] {
				flush(i)
				out = append(out, token{"kw", line[i:j]})
				plain = j
			}
			i = j
		default:
			i += size
		}
	}
	flush(len(line))
	return out
}

// comment reports whether s starts a line comment.
func (l *lang) comment(s string) bool {
	for _, c := range l.comments {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return false
}

// isWord reports whether b belongs to an identifier (ASCII letters,
// digits, '_').
func isWord(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
