package remote

import (
	"fmt"
	"net/url"
)

// URL is base followed by the path format makes of args, each string
// argument path-escaped (a sandbox id cannot reach another route).
func URL(base, format string, args ...any) string {
	for i, v := range args {
		if s, ok := v.(string); ok {
			args[i] = url.PathEscape(s)
		}
	}
	return base + fmt.Sprintf(format, args...)
}
