package openrath

// ImportNode is the Node of every chunk Decode makes from a file's records,
// telling them from chunks added here. A system chunk with this node is a
// system row of the file and is written back as one; other system chunks
// are system prompts (see PromptKey).
const ImportNode = "openrath"

// Lineage extras of an imported session. They keep what the header said
// that the session's chunks cannot, so that Encode writes the header again
// as it was.
const (
	// ExtraID is the header's id, as written.
	ExtraID = "openrath.id"
	// ExtraParents is parent_session_ids as written, a JSON array of
	// strings. Those that are UUIDs are also the lineage's Parents.
	ExtraParents = "openrath.parents"
	// ExtraOperator and ExtraKind are lineage_operator and lineage_kind.
	ExtraOperator = "openrath.lineage_operator"
	ExtraKind     = "openrath.lineage_kind"
	// ExtraExtras is lineage_extras (a JSON array of [key, value] pairs,
	// keys repeating and values of any JSON type as the file has them),
	// without the PromptKey pairs, which become chunks. It is absent when
	// no pair is left.
	ExtraExtras = "openrath.lineage_extras"
	// ExtraPrefix + key is each lineage extra, for people: string values
	// as they are, others as JSON. Of a repeated key the last value is
	// shown; ExtraExtras has them all.
	ExtraPrefix = "openrath.extra."
	// ExtraCreatedAt is created_at, as written.
	ExtraCreatedAt = "openrath.created_at"
	// ExtraSpec is "null" when the header names a sandbox backend with a
	// null sandbox_spec (which the placement cannot tell from an empty
	// spec).
	ExtraSpec = "openrath.sandbox_spec"
	// ExtraEntrypoint is sandbox_spec.entrypoint as JSON, when not null;
	// session.Spec has no entrypoint.
	ExtraEntrypoint = "openrath.sandbox_spec.entrypoint"
)
