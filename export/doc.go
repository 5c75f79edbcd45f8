// Package export turns stored sessions into things people and other tools
// read: the lineage graph (JSON, Graphviz DOT, Mermaid, SVG), session files
// (our JSONL and OpenRath-Python's session JSONL, both ways), and the
// evidence dossier, a self-contained HTML page plus JSON that lays out
// everything a run recorded: task, environment, workflow, tool calls and
// their file effects, tests, decisions, approvals, memory, usage and the
// verification status of the hash chain.
package export
