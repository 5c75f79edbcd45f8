package compression

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/tool"
)

// services are the systems the investigator can read, in the order the
// scripted investigator reads them.
var services = []string{"gateway", "checkout", "payments", "postgres", "inventory"}

// logs holds each service's log for the incident window. They tell one
// story: a payments deploy that retries card authorisations without
// backoff exhausts the database's connections, checkout times out waiting
// for payments, and the gateway answers 502 until the deploy is rolled
// back.
var logs = map[string]string{
	"gateway": `09:10:00 INFO  upstream=checkout rps=412 p99=182ms errors=0
09:12:04 ERROR upstream=checkout status=502 "upstream prematurely closed connection" count=97/10s
09:15:00 ERROR upstream=checkout status=502 count=2140/min (51% of requests)
09:20:00 ERROR upstream=checkout status=502 count=2388/min (56% of requests)
09:24:12 INFO  upstream=checkout status=502 count=31/10s, falling
09:24:40 INFO  upstream=checkout rps=409 p99=190ms errors=0`,
	"checkout": `09:11:59 INFO  payments client pool max=20 in_use=6
09:12:01 WARN  payments client: pool exhausted (max=20, waiting=143)
09:12:03 ERROR POST /api/checkout: context deadline exceeded after 30s calling payments.Authorize
09:12:03 ERROR worker 7 killed by watchdog: request exceeded 30s; connection to gateway closed
09:18:30 WARN  payments client: pool exhausted (max=20, waiting=611)
09:24:05 INFO  payments.Authorize p99=270ms; pool in_use=5`,
	"payments": `09:11:55 INFO  deploy v4.18.0 started (change #2291: "retry card authorisation 5x, no backoff")
09:12:00 WARN  Authorize p99=9.8s (was 240ms); retries=4.7 per request
09:12:02 ERROR acquire db connection: timed out after 5s (pool max=50 in_use=50)
09:16:40 ERROR acquire db connection: timed out after 5s (1,204 in the last minute)
09:23:50 INFO  rollback to v4.17.2 completed by on-call (ana)
09:24:10 INFO  Authorize p99=260ms; retries=0.02 per request`,
	"postgres": `09:11:00 LOG   connections: 188 of max_connections=500
09:12:00 LOG   connections: 497 of max_connections=500
09:12:01 FATAL remaining connection slots are reserved for non-replication superuser connections
09:17:00 LOG   connections: 500 of 500; 3,912 refused in the last 5 minutes
09:24:30 LOG   connections: 121 of max_connections=500`,
	"inventory": `09:00:00-09:30:00 INFO  all requests 200; rps=95; p99=35ms; no errors, no deploys`,
}

// logArgs are read_log's arguments.
type logArgs struct {
	Service string `json:"service" jsonschema:"the service whose log to read: gateway, checkout, payments, postgres or inventory"`
}

// readLog is the investigator's only tool: a read-only view of the
// incident window's logs.
func readLog() (tool.Tool, error) {
	return tool.FuncWith("read_log", "Read one service's log for the incident window, 09:10 to 09:25 UTC.",
		func(_ context.Context, _ tool.Env, a logArgs) (string, error) {
			l, ok := logs[a.Service]
			if !ok {
				return "", fmt.Errorf("no log for %q; the services are %s", a.Service, strings.Join(services, ", "))
			}
			return l, nil
		},
		tool.Idempotent[logArgs]())
}
