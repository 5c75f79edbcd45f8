package cli

import (
	"strings"

	"github.com/openrath/rath"
)

// parseArgs parses repeated --arg k=v flags; a flag without "=", with an
// empty name, or naming a parameter twice is a usage error.
func parseArgs(flags []string) (map[string]string, error) {
	args := make(map[string]string, len(flags))
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageErr("--arg %q is not of the form name=value", f)
		}
		if _, dup := args[k]; dup {
			return nil, usageErr("--arg %s is given twice", k)
		}
		args[k] = v
	}
	return args, nil
}

// paramsList is a workflow's parameters in a line: required ones by name,
// optional ones in brackets (with their default).
func paramsList(ps []rath.Param) string {
	if len(ps) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString(" ")
		}
		switch {
		case p.Required:
			b.WriteString(p.Name)
		case p.Default != "":
			b.WriteString("[" + p.Name + "=" + p.Default + "]")
		default:
			b.WriteString("[" + p.Name + "]")
		}
	}
	return b.String()
}
