package opensandbox

import "strings"

// quote makes s one word of a POSIX shell command: single-quoted, with
// each single quote in s closing the quoted part, adding an escaped quote
// and opening another. Nothing is special inside single quotes, so any
// string survives.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellCommand is argv as the one shell string execd runs with bash -c
// (or sh -c): exec, then every word quoted, so the shell parses back
// exactly argv and is replaced by the program.
func shellCommand(argv []string) string {
	var b strings.Builder
	b.WriteString("exec")
	for _, a := range argv {
		b.WriteByte(' ')
		b.WriteString(quote(a))
	}
	return b.String()
}
