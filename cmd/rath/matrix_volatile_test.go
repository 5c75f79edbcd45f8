package main

import "regexp"

// volatileText is text of a workflow's output that differs between two
// uninterrupted runs of it, for a stated reason, and what it becomes in
// the projection. The projection's general rules (matrix_project_test.go)
// come first; these are for what no general rule can tell from evidence.
// An entry needs a reason that holds for two runs that were never
// interrupted; a difference that appears only after a resume is a finding,
// never an entry here.
type volatileText struct {
	re   *regexp.Regexp
	repl string
	// drop, if set, is a field dropped wherever it is (re is then nil).
	drop string
	why  string
}

var volatile = map[string][]volatileText{
	"report": {{
		re:   regexp.MustCompile(`(?m)(\| [^|\n]+ \| )\d+\.\d( \| [^|\n]* \|)$`),
		repl: "${1}ms${2}",
		why: "the report's tool-log table gives each call's duration in ms (its second-to-last column), " +
			"measured in the run the report reads",
	}, {
		re:   regexp.MustCompile(`wrote \d+ bytes to`),
		repl: "wrote N bytes to",
		why:  "the report's length follows the digits of those durations (write_file says how many bytes it wrote)",
	}, {
		drop: "size",
		why:  "likewise, report.md's size in the write's file effect",
	}, {
		drop: "input_tokens",
		why: "the scripted reporter counts a request's input tokens from the length of its messages, " +
			"which hold the durations of the calls of the run it reads",
	}},
	"memory": {{
		drop: "score",
		why: "on PostgreSQL a recall's scores weigh each term by the document frequencies ANALYZE last sampled into " +
			"pg_stats (memory/postgres/idf.go), in the database every case shares, analysed when autovacuum chooses; " +
			"the hits and their order are still compared",
	}},
	"engineering": {{
		re:   regexp.MustCompile(`(?m)^(ok  |FAIL)(\s+\S+\s+)\d+\.\d+s$`),
		repl: "${1}${2}0.000s",
		why:  "go test prints how long each package's tests took",
	}, {
		re:   regexp.MustCompile(`(?m)^(\s*--- (?:FAIL|PASS|SKIP): \S+) \(\d+\.\d+s\)`),
		repl: "${1} (0.00s)",
		why:  "and each test",
	}},
}
