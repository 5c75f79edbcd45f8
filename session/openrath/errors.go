package openrath

import "errors"

// ErrCycle marks lineage that would loop: a file whose parent_session_ids
// name its own id, or (found by export.Import against a store) whose
// parents descend from it. Errors wrapping it are refused imports.
var ErrCycle = errors.New("openrath: lineage cycle")
