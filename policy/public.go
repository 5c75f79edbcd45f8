package policy

import (
	"path/filepath"
	"strings"
)

// public is a load error of a file under the Dir as a decision shows it
// to a run's tenant — in the run's session, its error, its events: every
// path under the directory made relative to it ("acme/web.json"), so that
// no server path reaches a tenant. The error itself, with the paths, is
// the operator's (Policy, Check, the Dir's logger).
func (d *Dir) public(err error) string {
	prefix := d.root + string(filepath.Separator)
	if d.root == string(filepath.Separator) {
		prefix = d.root
	}
	return strings.ReplaceAll(err.Error(), prefix, "")
}
