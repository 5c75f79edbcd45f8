// Package report is the technical-report evidence example: a report that
// preserves a run instead of summarising its outcome, every claim of which
// can be traced to the stored run.
//
// The workflow, registered as "report", takes the most recent run of an
// evidence workflow (Sources: engineering, research, trading) in the
// runtime's store — or, if there is none, runs "research" first to have
// one — and hands its id to a reporter agent:
//
//	agent reporter      run_overview, session_graph, tool_log, sandbox_metadata,
//	                    validation_results, failure_analysis (tool.Func over rt.Store),
//	                    write_file report.md
//	validator traceable every section cites a successful read call of the source run
//
// The read tools look only at the store: the run's metadata and hash-chain
// verification (store.Verify), its lineage graph (export.LoadGraph) and the
// sessions the run committed, its tool_result chunks, its placement chunks,
// its approval and decision chunks, and its error chunks, failed tool
// results and rejected verdicts. The reporter writes the report from their
// results, and each section begins with the call it came from:
//
//	## Validation
//
//	Source: tool `validation_results`, call `r-validation-results`.
//
// so a reader of report.md can open the reporter's session and find, next
// to the report, the tool result every sentence rests on. The report's text
// is recorded twice: in the write_file call's arguments and as its
// workspace effect (the file added, with its hash). The traceable validator
// checks the citations and records its verdict as an approval chunk.
//
// The offline reporter is scripted but honest: it composes the report from
// the six results it was given, nothing else.
package report
