// Package client is a typed Go client of the Agent Server's /v1 API
// (docs/api.md): sessions, their chunks a page at a time, graphs, exports,
// forks and imports; runs on the cluster (a submission under an
// Idempotency-Key, retried when its answer is lost), their control,
// approvals, workers and queues; schedules and webhooks; and session and
// run event streams that reconnect by themselves with Last-Event-ID, so a
// reader sees every event once however often the connection drops.
//
//	c, err := client.New("http://127.0.0.1:7474", client.WithToken(tok))
//	s, err := c.Session(ctx, id)
//	for ch, err := range c.Chunks(ctx, id) { ... }
//	run, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "triage", Input: &text})
//	for ev, err := range c.RunEvents(ctx, run.ID, "").All() { ... }
//
// An error the server answered is an *Error, which errors.Is matches with
// the sentinel of its code (ErrNotFound, ErrConflict, ...).
package client
