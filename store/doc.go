// Package store defines where sessions live between runs: the Store
// interface, its lifecycle rules, and the by-name registry of backends.
//
// A store keeps chunks content-addressed and sessions as heads over shared
// chains, so a fork costs a session row, not a copy of its chunks. Commit
// moves a session's head with compare-and-swap: two writers on one head
// cannot both win, and the loser gets ErrConflict with nothing lost.
//
// Backends register themselves by URL scheme (the database/sql pattern):
// import _ "github.com/openrath/rath/store/sqlite" and Open "sqlite:///path".
// Every backend passes the conformance suite in store/storetest.
package store
