// Package postgres is the shared memory backend: long-term memory in a
// PostgreSQL database, so that every worker of a cluster, on any machine,
// reads and writes one memory with the same provenance and rollback as
// memory/local. It is registered for postgres:// and postgresql:// URLs;
// by default the runtime opens it on the store's own database, where it
// keeps its own schema (rath_memory).
//
// Lexical recall is PostgreSQL full-text search: each entry's tsvector,
// built with a language-aware text-search configuration (the URL's
// language parameter, english by default) after folding diacritics, sits
// in a GIN index. A query's words are normalised by the same configuration
// and every entry matching any of them is scored by the sum, over the
// words it holds, of the word's ts_rank weighted by its inverse document
// frequency, read from the planner's statistics of the column: a rare word
// counts for more than a common one, as bm25 has it in memory/local. An
// entry matching no word is never a hit.
//
// With an embedder, every entry is embedded as it is written and recall is
// hybrid: the lexical ranking and the vector-similarity ranking are fused
// by reciprocal rank. Vectors are kept as real[]; when the server has the
// pgvector extension they are also a generated vector column searched
// through an HNSW index (cosine), and otherwise by an exact scan of the
// searched scopes. Open logs which one it uses, and Describe says it.
//
// URL parameters, taken out before connecting: language (a text-search
// configuration, fixed when the schema is created), vectors (auto, the
// default: pgvector if the server offers it; hnsw: pgvector required;
// exact: never), and min_similarity (cosine below which a vector match is
// no hit, 0.25 by default).
package postgres
