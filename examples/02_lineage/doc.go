// Package lineage shows the three operations that make new sessions out of
// old ones — Fork, Detach and Merge — inside one workflow, and the lineage
// graph they leave in the store.
//
// The workflow is a flow.Func. From the user's question it forks two
// branches; on each a "proposer" agent argues for one design (an
// in-process cache, a shared Redis cache). A fork is O(1): it shares every
// chunk with its source and has a new id whose lineage names the source
// (kind "fork"). The branches never see each other's chunks.
//
// Merge joins the two proposals: their exact common prefix (found by chunk
// id) is kept once, then the first branch's chunks unchanged, then the
// second branch's re-chained after them — each gets a new id and keeps its
// old one as Origin. The merged session's lineage names both branches
// (kind "merge") and says how many chunks were shared and added on each
// side; a note records that, through runctx.Record so a replay reproduces
// it.
//
// Detach copies the merged session into an independent history: the same
// chunks, a new id and no parents at all. It goes to a "reviewer" agent, as
// if handed to someone outside this line of work. Merging the review back
// shows that Merge works by content, not by lineage: the reviewed copy
// extends the merged session's chunks, so the merge fast-forwards and the
// review's chunks keep their ids. In the graph the detached copy is a root
// of its own that joins the main line only at that merge.
//
// The function commits every session it makes (forks, the merge, the
// detached copy) so that the store's lineage graph is complete; agents
// commit their own. Offline a scripted model plays both agents. Run it and
// draw the graph:
//
//	go run ./cmd/rath run lineage
//	go run ./cmd/rath graph <the printed id> --format mermaid
//
// From Go: export.LoadGraph(ctx, rt.Store, out.ID()) and Graph.Write with
// "mermaid", "dot" or "json".
package lineage
