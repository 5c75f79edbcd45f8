// Package audit keeps the audit log: who authenticated (or failed to),
// every grant and policy decision, every secret resolved, every run
// control (cancel, resume, review, approve) and every token change — an
// append-only, hash-chained record in the store, verified like sessions.
//
// # Lanes
//
// The log is a set of lanes. A lane is a session of the store, labelled
// LabelLane, written by one Log (one process) only, so that writers never
// contend on a session's head. Its first chunk is a header (the writer,
// when it began, the lane it continues, the lanes it witnessed); chunk i
// after it is record i, a note chunk whose text is "rath audit record: "
// and the record's JSON in one canonical form. The store's content
// addressing chains them: each chunk's id is a SHA-256 over its parent's
// id and its own bytes. A lane takes Options.LaneLimit records; then it is
// sealed and a new one begins, whose header names it. Lanes are never
// given a closed status, so the store's GC does not collect them.
//
// Concurrent Appends are committed together: one goroutine per Log takes
// every record waiting, commits them to the lane in one store commit, and
// answers each Append with that commit's result. After each commit (or
// every Options.AnchorEvery records) the lane's anchor label records its
// length, head and last time; Close seals the lane, fixing its anchor.
//
// # What Verify catches
//
// Verify reads every lane and reports, naming the lane and the record:
//
//   - a record edited in the database (the chunk's bytes no longer match
//     its id);
//   - a record removed, inserted or moved (a parent link breaks, and Seq
//     no longer runs 1, 2, 3, …) — Seq is inside the hashed record, so a
//     removal or reordering is seen even if the attacker re-hashes the
//     chain after it;
//   - records cut off a lane's end, back to before its anchor, or a lane
//     rewritten (re-hashed) before its anchor (the anchor's head is gone);
//   - records added to a sealed lane, or a sealed lane cut short, that a
//     later lane's header names;
//   - a lane removed outright (its label or its rows deleted), or cut
//     short, if a lane begun later witnessed it: each new lane's header
//     records the length and head of the newest Options.Witness other
//     lanes as they were;
//   - a record that does not decode, or whose time goes back.
//
// # What it cannot catch
//
// Anyone who can write the database can rewrite what no one else holds a
// copy of. Verify cannot see:
//
//   - the records a lane took after its last anchor (at most the last
//     commit's, with the default AnchorEvery), cut off together with the
//     lane's stored length and head;
//   - a lane cut short, or rewritten and re-hashed, with its anchor label
//     rewritten to match — unless a later lane witnessed it, in which case
//     that lane's header must be rewritten and re-hashed too, and so on to
//     the newest lane;
//   - the newest lanes removed outright, which no later lane witnessed;
//   - a consistent rewrite of the whole log: every lane re-hashed, every
//     label and header rewritten.
//
// What closes these gaps is a copy of the heads kept outside the
// database: Verify's Report lists every lane's record count and head, and
// whether it is sealed — a sealed lane's never change again. Keep them (a
// ticket, another machine, a write-once bucket), and a later report in
// which a sealed lane is missing or has another count or head shows the
// rewrite. The log is tamper-evident, not tamper-proof: it makes an edit
// visible, it does not prevent one, and only against a copy made before
// the edit.
//
// # The witness file
//
// A Log keeps that copy itself when Options.WitnessFile names a file: it
// appends a JSON line there for its lane every Options.WitnessEvery
// records, or Options.WitnessInterval after the first record not yet
// witnessed, and when the lane is sealed (at its bound, and at Close):
//
//	{"time":"…","lane":"ses_…","len":1000,"head":"sha256:…","prev":"sha256:…","hash":"sha256:…"}
//
// len and head are the lane's record count and last chunk; "sealed":true
// marks a lane's last line; hash is the SHA-256 of the line's JSON without
// hash, and prev the hash of the file's line before it, so the file is a
// hash chain of its own. Each line is written in one write, under an
// exclusive flock, and synced; several Logs (processes) may share a file.
// A line a crash leaves incomplete is skipped by VerifyWitness, and the
// next writer ends it and chains past it.
//
// VerifyWitness is Verify, and checks the store against the file: every
// line's hash and link to the line before (a line edited, removed,
// inserted or moved, or the file's first lines cut off, is named by its
// line), and every head the file recorded still in its lane at the length
// recorded — a lane cut short, rewritten below a witnessed head, removed,
// or given records after the witness saw it sealed, is named by lane and
// record even when its anchor label and the headers were rewritten to
// match.
//
// What the witness cannot catch: records committed after its lane's last
// line (at most WitnessEvery records or WitnessInterval), and whatever
// whoever can write the file as well rewrites — its last lines cut off,
// or the whole file re-hashed to match a rewritten log. The chain has no
// key: it shows an edit in the middle of the file, not a consistent
// rewrite of it. Keep the file where the database's writers cannot write
// (another machine, an append-only file, a log shipper sending each line
// off the host as it is written), one file per store.
package audit
