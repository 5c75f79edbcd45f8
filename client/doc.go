// Package client is a typed Go client of the Agent Server's /v1 API
// (docs/api.md): sessions, their chunks a page at a time, graphs, exports,
// forks and imports, and an event stream that reconnects by itself with
// Last-Event-ID, so a reader sees every event once however often the
// connection drops.
//
//	c, err := client.New("http://127.0.0.1:7474", client.WithToken(tok))
//	s, err := c.Session(ctx, id)
//	for ch, err := range c.Chunks(ctx, id) { ... }
//	st := c.SessionEvents(ctx, id, -1)
//	for ev, err := range st.All() { ... }
//
// An error the server answered is an *Error, which errors.Is matches with
// the sentinel of its code (ErrNotFound, ErrConflict, ...).
package client
