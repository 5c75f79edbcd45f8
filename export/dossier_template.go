package export

// dossierHTML is the evidence dossier page. Everything it needs is inline:
// it loads nothing, so it opens from disk, offline, as it was written.
const dossierHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>Evidence dossier · {{.Session.ID}}</title>
<style>
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg:#ffffff; --panel:#f6f8fa; --ok:#1a7f37; --bad:#cf222e; --warn:#9a6700; --accent:#0969da; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color:var(--fg); background:var(--bg); }
header { padding:16px 24px; border-bottom:1px solid var(--line); background:var(--panel); }
header h1 { margin:0 0 4px; font-size:20px; }
nav { position:sticky; top:0; z-index:2; background:var(--bg); border-bottom:1px solid var(--line); padding:6px 24px; font-size:13px; }
nav a { color:var(--accent); text-decoration:none; margin-right:12px; white-space:nowrap; }
main { padding:8px 24px 48px; max-width:1400px; }
section { margin:24px 0; }
h2 { font-size:17px; border-bottom:1px solid var(--line); padding-bottom:4px; }
h3 { font-size:14px; margin:12px 0 4px; }
table { border-collapse:collapse; width:100%; margin:6px 0; font-size:13px; }
th, td { border:1px solid var(--line); padding:4px 6px; text-align:left; vertical-align:top; }
td.hash, td.node { overflow-wrap:anywhere; min-width:16ch; }
td.summary { overflow-wrap:anywhere; }
td.num, td.time, td.short { white-space:nowrap; }
th { background:var(--panel); font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
code, pre, .mono { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:12px; }
pre { background:var(--panel); border:1px solid var(--line); padding:8px; overflow:auto; max-height:480px; white-space:pre-wrap; word-break:break-word; margin:4px 0; }
.muted { color:var(--muted); }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; border:1px solid currentColor; }
.ok, .pass, .approved { color:var(--ok); }
.bad, .fail, .rejected { color:var(--bad); }
.unknown, .requested { color:var(--warn); }
.note { color:var(--muted); }
ul.notes { margin:4px 0; padding-left:18px; }
details { border:1px solid var(--line); border-radius:6px; margin:6px 0; padding:4px 8px; }
details > summary { cursor:pointer; }
.diff { padding:0; }
.diff span { display:block; padding:0 8px; }
.diff .add { background:#dafbe1; color:#116329; }
.diff .del { background:#ffebe9; color:#a40e26; }
.diff .hunk { background:#ddf4ff; color:#0550ae; }
.diff .file { color:var(--muted); font-weight:600; }
.diff i { font-style:normal; }
.diff i.kw { color:#8250df; font-weight:600; } .diff i.str { color:#0a3069; } .diff i.num { color:#0550ae; } .diff i.com { color:#6e7781; font-style:italic; }
ul.tree { list-style:none; padding-left:18px; margin:4px 0; }
ul.tree li { margin:2px 0; }
.graph svg { max-width:100%; height:auto; }
.swatch { display:inline-block; width:12px; height:12px; border-radius:3px; border:2px solid; vertical-align:middle; }
.swatch.accepted { border-color:#188038; } .swatch.rejected { border-color:#c5221f; } .swatch.root { border-color:#1a56db; }
.task { font-size:15px; }
#timeline-filter { padding:4px 8px; width:320px; max-width:100%; margin:4px 0; }
tr.k-error td, tr.k-approval td { background:#fff8f7; }
tr.k-decision td { background:#f5f9ff; }
</style>
</head>
<body>
<header>
<h1>Evidence dossier</h1>
<div class="mono">{{.Session.ID}}</div>
<div class="muted">
{{.Session.Len}} chunks · head <span class="mono" title="{{.Session.Head}}">{{short .Session.Head}}</span>
· status {{.Session.Status}} · lineage {{.Session.Lineage.Op}} ({{.Session.Lineage.Kind}})
{{with .Session.Lineage.Parents}}· parents {{range $i, $p := .}}{{if $i}}, {{end}}<span class="mono">{{$p}}</span>{{end}}{{end}}
· created {{ts .Session.Created}} · generated {{ts .Generated}}
</div>
<div>Verification:
{{if .Verify.OK}}<span class="badge ok">verified</span>{{else}}<span class="badge bad">does not verify</span>{{end}}
<span class="muted">session: {{.Verify.Session}} · store: {{.Verify.Store}}</span></div>
</header>
<nav>
<a href="#task">Task</a><a href="#environment">Environment</a><a href="#workflow">Workflow</a><a href="#lineage">Lineage</a>
<a href="#tools">Tool calls ({{len .ToolCalls}})</a><a href="#tests">Tests ({{len .Tests}})</a><a href="#decisions">Decisions ({{len .Decisions}})</a>
<a href="#rejected">Rejected &amp; approvals</a><a href="#memory">Memory ({{len .Memory}})</a><a href="#usage">Usage</a><a href="#timeline">Timeline</a>
</nav>
<main>

<section id="task">
<h2>Task</h2>
{{if .Task}}<pre class="task">{{.Task}}</pre>{{else}}<p class="muted">The session has no user message.</p>{{end}}
{{with .Session.Labels}}<h3>Labels</h3><table><tr><th>Key</th><th>Value</th></tr>{{range $k, $v := .}}<tr><td class="mono">{{$k}}</td><td>{{$v}}</td></tr>{{end}}</table>{{end}}
</section>

<section id="environment">
<h2>Environment</h2>
{{if .Environment}}{{$e := envgroups .Environment}}
<h3>Sandbox setups</h3>
<p class="muted">Each distinct setup once (backend, image, environment, limits); the placements below name the setup they used.</p>
<table id="env-setups">
<tr><th>Setup</th><th>Backend</th><th>Image</th><th>Network</th><th>Env</th><th>Secret env (names)</th><th>Limits</th><th>Provider</th><th>Placements</th></tr>
{{range $e.Groups}}<tr class="env-setup"><td><b>{{.Label}}</b></td>{{with .Env}}<td>{{.Backend}}</td><td class="mono">{{.Image}}</td>
<td>{{if .Spec.Network}}on{{else}}off{{end}}</td><td class="mono env">{{range envlist .Spec.Env}}<div>{{.}}</div>{{end}}</td><td class="mono">{{join .Spec.SecretEnv}}</td>
<td class="mono">{{with .Spec.Timeout}}timeout {{dur .}} {{end}}{{with .Spec.MemoryBytes}}mem {{.}}B {{end}}{{with .Spec.CPUs}}cpus {{.}} {{end}}{{with .Spec.PIDs}}pids {{.}}{{end}}</td>
<td class="mono">{{with .Remote}}{{.Provider}} {{.URL}}{{with .Domain}} domain {{.}}{{end}}{{with .Template}} from {{.}}{{end}}{{with .SnapshotID}} snapshot {{.}}{{end}}{{end}}</td>{{end}}
<td class="num">{{len .Uses}}</td></tr>{{end}}
</table>
<h3>Placements</h3>
<table id="env-placements">
<tr><th class="num">#</th><th>Setup</th><th>Dir</th><th>Sandbox</th><th>Workspace tree hash</th><th>Cloned from</th><th>Node</th></tr>
{{range $e.Rows}}<tr><td class="num">{{.Index}}</td><td><b>{{.Group}}</b></td><td class="mono">{{.Spec.Dir}}</td><td class="mono hash">{{.SandboxID}}</td><td class="mono hash">{{.TreeHash}}</td><td class="mono hash">{{.ClonedFrom}}</td><td class="mono node">{{.Node}}</td></tr>
{{end}}</table>
{{else}}<p class="muted">The session was never placed on a sandbox.</p>{{end}}
</section>

<section id="workflow">
<h2>Workflow</h2>
<p class="muted">Node paths the chunks were recorded under, with chunk counts (own / including children).</p>
{{define "wf"}}<li><span class="mono">{{.Name}}</span> <span class="muted">{{.Chunks}} / {{.Total}}</span>{{if .Children}}<ul class="tree">{{range .Children}}{{template "wf" .}}{{end}}</ul>{{end}}</li>{{end}}
<ul class="tree">{{with .Workflow}}{{template "wf" .}}{{end}}</ul>
</section>

<section id="lineage">
<h2>Lineage</h2>
{{if .SVG}}<div class="graph">{{.SVG}}</div>
<p class="legend muted"><span class="swatch accepted"></span> accepted branch · <span class="swatch rejected"></span> rejected branch (or failed) · <span class="swatch root"></span> this session</p>
<details><summary>DOT source</summary><pre>{{.GraphDOT}}</pre></details>{{else}}{{with .Note}}<p class="muted">{{.}}</p>{{end}}<pre>{{.GraphDOT}}</pre>{{end}}
{{with .Graph}}
<table>
<tr><th>Session</th><th>Op</th><th>Kind</th><th>Status</th><th class="num">Len</th><th>Created</th><th>Parents</th></tr>
{{range .Nodes}}<tr><td class="mono" title="{{.ID}}">{{if eq .ID $.Session.ID}}<b>{{.ID}}</b>{{else}}{{.ID}}{{end}}</td><td class="mono">{{.Op}}</td><td>{{.Kind}}</td><td>{{.Status}}</td><td class="num">{{.Len}}</td><td>{{ts .Created}}</td>
<td class="mono">{{$id := .ID}}{{range $.Graph.Edges}}{{if eq .To $id}}{{sid .From}} {{end}}{{end}}</td></tr>{{end}}
</table>
{{end}}
</section>

<section id="tools">
<h2>Tool calls</h2>
{{if not .ToolCalls}}<p class="muted">No tool calls.</p>{{end}}
{{range .ToolCalls}}
<details{{if .Effects}} open{{end}}>
<summary><span class="mono">#{{.Index}}</span> <b>{{.Tool}}</b> <span class="mono muted">{{.CallID}}</span>
{{if .Missing}}<span class="badge unknown">no result</span>{{else if .Error}}<span class="badge bad">{{.Error.Kind}}</span>{{else}}<span class="badge ok">ok</span>{{end}}
{{range .Notes}}<span class="badge note">{{.Kind}}</span> {{end}}
<span class="muted">{{dur .Duration}}{{with .SandboxID}} · sandbox {{.}}{{end}}{{with .Node}} · {{.}}{{end}}{{with .Effects}} · file effects: {{len .}}{{end}}{{with .Egress}} · connections: {{len .}}{{end}}</span></summary>
<h3>Arguments</h3>
{{if .Args}}<pre>{{pretty .Args}}</pre>{{else if .ArgsText}}<p class="muted">Not valid JSON, as sent:</p><pre>{{.ArgsText}}</pre>{{else}}<p class="muted">none</p>{{end}}
{{if .Error}}<h3>Error</h3><pre class="bad">{{.Error.Kind}}: {{.Error.Message}}</pre>{{end}}
{{if .Result}}<h3>Result</h3><pre>{{.Result}}</pre>{{end}}
{{if .FullHash}}<p class="muted">Result truncated: the full result was {{.FullSize}} bytes, <span class="mono">{{.FullHash}}</span>.</p>{{end}}
{{if .Notes}}<h3>Notes</h3>
<ul class="notes">{{range .Notes}}<li data-kind="{{.Kind}}"><b>{{.Kind}}</b>: {{.Text}}</li>{{end}}</ul>{{end}}
{{if .Egress}}<h3>Connections</h3>
<table class="egress"><tr><th>Time</th><th>Host</th><th class="num">Port</th><th>Decision</th><th>Rule</th><th>Reason</th></tr>
{{range .Egress}}<tr data-allowed="{{.Allowed}}"><td class="mono">{{ts .Time}}</td><td class="mono">{{.Host}}</td><td class="num">{{.Port}}</td><td>{{if .Allowed}}<span class="badge ok">allowed</span>{{else}}<span class="badge bad">refused</span>{{end}}</td><td class="mono">{{.Rule}}</td><td>{{.Reason}}</td></tr>{{end}}
</table>{{end}}
{{if .Effects}}<h3>File effects</h3>
<table><tr><th>Path</th><th>Op</th><th>Before</th><th>After</th><th class="num">Size</th></tr>
{{range .Effects}}<tr><td class="mono">{{.Path}}</td><td>{{.Op}}</td><td class="mono hash">{{.Before}}</td><td class="mono hash">{{.After}}</td><td class="num">{{.Size}}</td></tr>{{end}}
</table>
{{range .Effects}}{{if .Diff}}<div class="mono muted">{{.Path}}</div><pre class="diff" data-path="{{.Path}}">{{range diff .Path .Diff}}<span class="{{.Class}}">{{.Marker}}{{range .Tokens}}{{if .Class}}<i class="{{.Class}}">{{.Text}}</i>{{else}}{{.Text}}{{end}}{{end}}</span>{{end}}</pre>{{else if .Binary}}<p class="muted">{{.Path}}: binary file</p>{{end}}{{end}}
{{end}}
<p class="muted">chunk <span class="mono" title="{{.Chunk}}">{{short .Chunk}}</span>{{with .Request}} · requested by <span class="mono" title="{{.}}">{{short .}}</span>{{end}} · {{ts .Time}}</p>
</details>
{{end}}
</section>

<section id="tests">
<h2>Tests</h2>
{{if .Tests}}
<table>
<tr><th class="num">#</th><th>Tool</th><th>Command</th><th class="num">Exit code</th><th>Result</th><th>Node</th></tr>
{{range .Tests}}<tr><td class="num">{{.Index}}</td><td>{{.Tool}}</td><td><pre>{{.Command}}</pre></td><td class="num">{{exit .ExitCode}}</td>
<td><span class="badge {{.Status}}">{{.Status}}</span>{{with .Error}}<div class="bad">{{.}}</div>{{end}}</td><td class="mono node">{{.Node}}</td></tr>{{end}}
</table>
{{range .Tests}}{{if .Output}}<details><summary>Output of #{{.Index}} <span class="mono">{{.CallID}}</span></summary><pre>{{.Output}}</pre></details>{{end}}{{end}}
{{else}}<p class="muted">No test runs (run_command or run_code calls mentioning "test").</p>{{end}}
</section>

<section id="decisions">
<h2>Selector decisions</h2>
{{if .Decisions}}
<table>
<tr><th class="num">#</th><th>Selector</th><th>Candidates</th><th>Choice</th><th>Reason</th><th>Node</th></tr>
{{range .Decisions}}<tr><td class="num">{{.Index}}</td><td>{{.Selector}}</td>
<td>{{range .Candidates}}<div><b>{{.Name}}</b>{{with .Description}} <span class="muted">— {{.}}</span>{{end}}</div>{{end}}</td>
<td><b>{{.Choice}}</b></td><td>{{.Reason}}</td><td class="mono node">{{.Node}}</td></tr>{{end}}
</table>
{{else}}<p class="muted">No selector decisions.</p>{{end}}
</section>

<section id="rejected">
<h2>Rejected branches, approvals and errors</h2>
<h3>Rejected</h3>
{{if .Rejected}}
<table>
<tr><th class="num">#</th><th>What</th><th>Subject</th><th>By</th><th>Reason</th><th>Node</th></tr>
{{range .Rejected}}<tr><td class="num">{{.Index}}</td><td>{{.What}}</td><td>{{.Subject}}</td><td>{{.By}}</td><td>{{.Reason}}</td><td class="mono node">{{.Node}}</td></tr>{{end}}
</table>
{{else}}<p class="muted">Nothing was rejected.</p>{{end}}
<h3>Approvals</h3>
{{if .Approvals}}
<table>
<tr><th class="num">#</th><th>Subject</th><th>Call</th><th>Verdict</th><th>By</th><th>Reason</th><th>Time</th></tr>
{{range .Approvals}}<tr><td class="num">{{.Index}}</td><td>{{.Subject}}</td><td class="mono">{{.CallID}}</td><td><span class="badge {{.Verdict}}">{{.Verdict}}</span></td><td>{{.By}}</td><td>{{.Reason}}</td><td class="time">{{ts .Time}}</td></tr>{{end}}
</table>
{{else}}<p class="muted">No approvals.</p>{{end}}
<h3>Errors</h3>
{{if .Errors}}
<table>
<tr><th class="num">#</th><th>Code</th><th>Message</th><th>Node</th><th>Time</th></tr>
{{range .Errors}}<tr><td class="num">{{.Index}}</td><td class="bad">{{.Code}}</td><td><pre>{{.Message}}</pre></td><td class="mono node">{{.Node}}</td><td class="time">{{ts .Time}}</td></tr>{{end}}
</table>
{{else}}<p class="muted">No recorded errors.</p>{{end}}
</section>

<section id="memory">
<h2>Memory</h2>
{{if .Memory}}
<table>
<tr><th class="num">#</th><th>Op</th><th>Store</th><th>Query / URI</th><th>Provenance</th><th>Node</th></tr>
{{range .Memory}}<tr><td class="num">{{.Index}}</td><td class="short">{{.Op}}</td><td>{{.Store}}</td>
<td class="hash">{{with .Query}}<div>query: <b>{{.}}</b></div>{{end}}{{with .Scopes}}<div class="muted">scopes: {{join .}}</div>{{end}}
{{with .URI}}<div class="mono">{{.}}</div>{{end}}{{with .ContentHash}}<div class="mono muted">{{.}}</div>{{end}}
{{with .Selector}}<div>selector: {{.}}</div>{{end}}{{with .Forgotten}}<div class="mono">forgot: {{join .}}</div>{{end}}{{with .Count}}<div class="muted">{{.}} entries</div>{{end}}</td>
<td>{{with .Evidence}}<div>evidence: <span class="mono">{{join (ids .)}}</span></div>{{end}}{{with .EvidenceKind}}<div class="muted">evidence kind: {{.}}</div>{{end}}
{{if .Hits}}<table><tr><th>Hit</th><th class="num">Score</th><th>Writer</th><th>Evidence</th><th>Text</th></tr>
{{range .Hits}}<tr><td class="mono hash">{{.URI}}{{with .Hash}}<div class="muted">{{.}}</div>{{end}}</td><td class="num">{{printf "%.3f" .Score}}</td><td class="mono hash">{{.Writer}}</td>
<td class="mono">{{join (ids .Evidence)}}{{with .EvidenceKind}} <span class="muted">({{.}})</span>{{end}}</td><td>{{.Text}}</td></tr>{{end}}
</table>{{end}}</td>
<td class="mono node">{{.Node}}</td></tr>{{end}}
</table>
{{else}}<p class="muted">No memory reads or writes.</p>{{end}}
</section>

<section id="usage">
<h2>Usage and cost</h2>
<p>{{.Usage.Calls}} model calls · total {{usage .Usage.Total}} · cost {{cost .Usage.Total}}</p>
{{define "usage"}}<table>
<tr><th>Node</th><th>Models</th><th class="num">Calls</th><th class="num">Input</th><th class="num">Output</th><th class="num">Cache read</th><th class="num">Cache write</th><th class="num">Reasoning</th><th class="num">Cost</th></tr>
{{range .}}<tr><td class="mono node">{{.Node}}</td><td>{{join .Models}}</td><td class="num">{{.Calls}}</td><td class="num">{{.Usage.InputTokens}}</td><td class="num">{{.Usage.OutputTokens}}</td>
<td class="num">{{.Usage.CacheReadTokens}}</td><td class="num">{{.Usage.CacheWriteTokens}}</td><td class="num">{{.Usage.ReasoningTokens}}</td><td class="num">{{cost .Usage}}</td></tr>{{end}}
</table>{{end}}
{{if .Usage.ByNode}}<h3>By agent</h3>{{template "usage" .Usage.ByAgent}}<h3>By node</h3>{{template "usage" .Usage.ByNode}}{{else}}<p class="muted">No model calls were recorded.</p>{{end}}
</section>

<section id="timeline">
<h2>Timeline</h2>
<input id="timeline-filter" type="search" placeholder="Filter: kind, node or text">
<table id="timeline-table">
<tr><th class="num">#</th><th>Chunk</th><th>Kind</th><th>Node</th><th>Time</th><th>Tier</th><th>Summary</th></tr>
{{range .Timeline}}<tr class="k-{{.Kind}}"><td class="num">{{.Index}}</td><td class="mono short" title="{{.ID}}">{{short .ID}}{{with .Origin}}<div class="muted" title="{{.}}">from {{short .}}</div>{{end}}</td><td class="short">{{.Kind}}</td><td class="mono node">{{.Node}}</td><td class="mono time">{{ts .Time}}</td><td>{{.Tier}}</td><td class="summary">{{.Summary}}</td></tr>
{{end}}</table>
</section>
</main>
<script>
(function () {
  var input = document.getElementById("timeline-filter");
  var rows = document.querySelectorAll("#timeline-table tr[class^='k-']");
  input.addEventListener("input", function () {
    var q = input.value.toLowerCase();
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      r.style.display = q === "" || r.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none";
    }
  });
})();
</script>
</body>
</html>
`
