// The rath viewer: a single page over the server's public API, /v1 (see
// docs/api.md), and nothing else: what a person sees here, a program can
// get. Plain JavaScript, no dependencies, nothing loaded from elsewhere. Every piece of
// session data reaches the page through textContent, never as HTML; the
// only markup inserted is the server's lineage SVG, sanitised first.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const PAGE = 200; // chunks per timeline page

const state = {
  token: sessionStorage.getItem('rath.token') || '',
  id: null, // the session on view
  info: null,
  loaded: 0, // timeline chunks [0, loaded) are on the page
  next: null, // {cursor, at}: the timeline's next chunk page, which starts at chunk at
  listCursor: null, // the session list's next page
  pending: new Map(), // live chunks waiting for the ones before them
  len: 0, // the session's length as last heard
  tail: null, // {close()} of the live tail
  cluster: null, // {close()} of the cluster's event stream
  tailPaused: false,
  compareWith: null,
};

// ---------- small helpers ----------

const $ = (sel, root = document) => root.querySelector(sel);

// el builds an element: attrs sets attributes (data-* included) and the
// special keys text and class; children are nodes or strings (as text).
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d)) return iso;
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function fmtClock(iso) {
  const s = fmtTime(iso);
  return s.length > 11 ? s.slice(11) : s;
}

function fmtDuration(ns) {
  if (!ns) return '0 ms';
  if (ns < 1e6) return `${(ns / 1e3).toFixed(0)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

// fmtAgo says how long ago a time was, for times a page refreshes.
function fmtAgo(iso) {
  if (!iso || iso.startsWith('0001-')) return ''; // Go's zero time
  const t = Date.parse(iso);
  if (isNaN(t)) return iso;
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 1) return 'just now';
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return fmtTime(iso);
}

// kv shows a string map as "k=v, k=v", sorted.
function kv(m) {
  return Object.entries(m || {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join(', ');
}

function shortID(id) {
  return id && id.length > 12 ? '…' + id.slice(-8) : id || '';
}

function pretty(raw) {
  if (raw === undefined || raw === null || raw === '') return '';
  if (typeof raw !== 'string') return JSON.stringify(raw, null, 2);
  try { return JSON.stringify(JSON.parse(raw), null, 2); } catch { return raw; }
}

function firstLine(s, n = 160) {
  s = String(s || '').trim();
  const i = s.indexOf('\n');
  if (i >= 0) s = s.slice(0, i) + ' …';
  return s.length > n ? s.slice(0, n) + '…' : s;
}

function showError(msg) {
  const e = $('#error');
  e.textContent = msg;
  e.hidden = !msg;
}

function setAppState(s) { $('#app-state').dataset.state = s; }

// ---------- API ----------

// ApiError is an error answer of /v1: {"error": {code, message, reason,
// request_id}}.
class ApiError extends Error {
  constructor(status, body) {
    const e = body.error || {};
    super(e.message || `${status} error`);
    this.status = status;
    this.code = e.code || '';
    this.reason = e.reason || '';
  }
}

// errorText is the message of an "error" event's data (the same shape).
function errorText(data) {
  try { return (JSON.parse(data).error || {}).message || data; } catch { return data; }
}

function authHeaders(extra = {}) {
  const h = { ...extra };
  if (state.token) h.Authorization = 'Bearer ' + state.token;
  return h;
}

async function api(path, opts = {}) {
  const res = await fetch(path, { ...opts, headers: authHeaders({ Accept: 'application/json', ...(opts.headers || {}) }) });
  if (res.ok) return res;
  let body = {};
  try { body = await res.json(); } catch { body = {}; }
  if (!body.error || typeof body.error !== 'object') body = { error: { message: `${res.status} ${res.statusText}` } };
  if (res.status === 401) $('#token-form').hidden = false;
  throw new ApiError(res.status, body);
}

const getJSON = async (path) => (await api(path)).json();

async function postJSON(path, body) {
  const res = await api(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body || {}),
  });
  return res.json();
}

const sessionPath = (id) => '/v1/sessions/' + encodeURIComponent(id);

// ---------- routing ----------

function route() {
  const h = location.hash.replace(/^#/, '');
  const token = /^token=(.*)$/.exec(h);
  if (token) {
    // A token handed over in the URL fragment: keep it for this tab and
    // take it out of the address bar and history.
    state.token = decodeURIComponent(token[1]);
    sessionStorage.setItem('rath.token', state.token);
    history.replaceState(null, '', location.pathname + '#/');
    return route();
  }
  showError('');
  if (h === '/cluster') return openCluster();
  stopCluster();
  const m = /^\/s\/([^/]+)(?:\/compare\/([^/]+))?$/.exec(h);
  if (m) return openSession(decodeURIComponent(m[1]), m[2] ? decodeURIComponent(m[2]) : null);
  return openList();
}

function show(view) {
  $('#view-list').hidden = view !== 'list';
  $('#view-session').hidden = view !== 'session';
  $('#view-cluster').hidden = view !== 'cluster';
  const section = view === 'session' ? 'list' : view;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === section);
}

// ---------- session list ----------

let listSeq = 0;

async function openList() {
  stopTail();
  state.id = null;
  show('list');
  document.title = 'rath — sessions';
  await loadList();
}

// loadList shows the first page of the sessions the filters select, or
// with more, the next page below those shown.
async function loadList(more) {
  const seq = ++listSeq;
  const q = new URLSearchParams({ limit: String(PAGE) });
  const text = $('#filter-q').value.trim();
  const status = $('#filter-status').value;
  const op = $('#filter-op').value.trim();
  if (text) q.set('q', text);
  if (status) q.set('status', status);
  if (op) q.set('op', op);
  if (more === true && state.listCursor) q.set('cursor', state.listCursor);
  setAppState('loading');
  try {
    const page = await getJSON('/v1/sessions?' + q);
    if (seq !== listSeq) return; // a newer query won
    state.listCursor = page.next_cursor || null;
    renderList(page.items, more === true);
    setAppState('ready');
  } catch (e) {
    showError(e.message);
    setAppState('error');
  }
}

function renderList(infos, more) {
  const body = $('#session-list tbody');
  if (more) body.append(...infos.map(listRow));
  else body.replaceChildren(...infos.map(listRow));
  const n = body.children.length;
  $('#list-empty').hidden = n > 0;
  $('#list-count').textContent = `${n}${state.listCursor ? '+' : ''} session${n === 1 ? '' : 's'}`;
  $('#list-more').hidden = !state.listCursor;
  $('#session-list').dataset.count = String(n);
}

function sessionLink(id, text) {
  return el('a', { href: '#/s/' + encodeURIComponent(id), class: 'session-link mono', 'data-session-id': id, title: id, text: text || id });
}

function statusBadge(s) {
  return el('span', { class: 'status status-' + s, 'data-status': s, text: s });
}

function listRow(info) {
  const lin = info.lineage || {};
  const parents = el('td', { class: 'parents' });
  for (const p of lin.parents || []) parents.append(sessionLink(p, shortID(p)), ' ');
  return el('tr', { 'data-session-id': info.id, 'data-status': info.status, 'data-op': lin.op || '' },
    el('td', {}, sessionLink(info.id)),
    el('td', {}, statusBadge(info.status)),
    el('td', { class: 'op', text: lin.op || '' }),
    el('td', { class: 'lineage-kind', text: lin.kind || '' }),
    el('td', { class: 'len num', text: info.len }),
    el('td', { class: 'time', text: fmtTime(info.created) }),
    el('td', { class: 'time', text: fmtTime(info.updated) }),
    parents);
}

// ---------- one session ----------

async function openSession(id, compareWith) {
  show('session');
  if (state.id !== id) {
    stopTail();
    state.id = id;
    state.info = null;
    document.title = 'rath — ' + id;
    $('#session-id').textContent = id;
    $('#session-meta').replaceChildren();
    $('#timeline').replaceChildren();
    $('#compare').hidden = true;
    $('#merge').hidden = true;
    setAppState('loading');
    try {
      const v = await getJSON(sessionPath(id));
      if (state.id !== id) return;
      state.info = v;
      renderHeader(v);
      fillComparePicker(v);
      // The graph loads beside the timeline: a slow or failed drawing
      // never holds the timeline back, and the timeline never waits for
      // the live tail (a closed session has none).
      const graph = loadGraph(id);
      await loadTimeline(id, true);
      if (state.id !== id) return;
      setAppState('ready');
      $('#tail-toggle').hidden = !tailable(v);
      if (!tailable(v)) setTail('finished', `${v.status}: nothing more will be added`);
      else if (!state.tailPaused) startTail(id);
      await graph;
    } catch (e) {
      showError(e.message);
      setAppState('error');
      return;
    }
  }
  if (compareWith) await runCompare(id, compareWith);
}

// renderHeader shows the session view of GET /v1/sessions/{id}: the
// stored metadata with its usage, placement and children.
function renderHeader(v) {
  const info = v;
  const lin = info.lineage || {};
  const meta = $('#session-meta');
  const row = (k, ...vals) => [el('dt', { text: k }), el('dd', { 'data-field': k }, ...vals)];
  const parents = (lin.parents || []).flatMap((p) => [sessionLink(p, shortID(p)), ' ']);
  const extras = Object.entries(lin.extras || {}).map(([k, x]) => `${k}=${x}`).join(', ');
  const u = v.usage || {};
  const usage = `${u.input_tokens || 0} in / ${u.output_tokens || 0} out` + (u.cost_usd ? ` · $${u.cost_usd.toFixed(4)}` : '');
  const place = v.placement ? `${v.placement.backend}${v.placement.spec && v.placement.spec.image ? ' ' + v.placement.spec.image : ''}${v.placement.sandbox_id ? ' (' + v.placement.sandbox_id + ')' : ''}` : 'none';
  const labels = Object.entries(info.labels || {}).map(([k, x]) => `${k}=${x}`).join(', ');
  meta.replaceChildren(
    ...row('status', statusBadge(info.status)),
    ...row('op', `${lin.op || ''} (${lin.kind || ''})${extras ? ' · ' + extras : ''}`),
    ...row('parents', ...(parents.length ? parents : ['none'])),
    ...row('chunks', el('span', { id: 'session-len', text: info.len })),
    ...row('usage', usage),
    ...row('placement', place),
    ...row('created', fmtTime(info.created)),
    ...row('updated', fmtTime(info.updated)),
    ...(labels ? row('labels', labels) : []));
  state.len = info.len;
}

// ---------- lineage graph ----------

async function loadGraph(id) {
  const box = $('#graph-svg');
  const note = $('#graph-note');
  const dot = $('#graph-dot');
  box.replaceChildren();
  box.dataset.state = 'loading';
  note.hidden = true;
  dot.hidden = true;
  try {
    const res = await api(sessionPath(id) + '/graph?format=svg', { headers: { Accept: 'image/svg+xml' } });
    const svg = sanitizeSVG(await res.text());
    if (state.id !== id) return;
    decorateGraph(svg, id);
    box.replaceChildren(svg);
    box.dataset.state = 'svg';
    box.dataset.nodes = String(svg.querySelectorAll('g.node').length);
  } catch (e) {
    // The server draws the graph itself; should that fail, show why and
    // the graph as DOT text rather than nothing.
    if (state.id !== id) return;
    note.textContent = 'The lineage graph could not be drawn (' + e.message + '): it is shown as DOT text.';
    note.hidden = false;
    box.dataset.state = 'error';
    try {
      const text = await (await api(sessionPath(id) + '/graph?format=dot', { headers: { Accept: 'text/vnd.graphviz' } })).text();
      if (state.id !== id) return;
      dot.textContent = text;
      dot.hidden = false;
      box.dataset.state = 'dot';
    } catch (e2) {
      note.textContent += ' ' + e2.message;
    }
  }
}

// sanitizeSVG parses the server's SVG and drops anything active: scripts,
// foreign objects, event handlers and links that leave the page.
function sanitizeSVG(text) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const root = doc.documentElement;
  if (root.nodeName !== 'svg') throw new Error('The server sent a lineage graph that is not SVG.');
  for (const bad of root.querySelectorAll('script, foreignObject, iframe, object, embed')) bad.remove();
  for (const n of [root, ...root.querySelectorAll('*')]) {
    for (const a of [...n.attributes]) {
      const name = a.name.toLowerCase();
      const href = name === 'href' || name === 'xlink:href';
      if (name.startsWith('on') || (href && !a.value.startsWith('#'))) n.removeAttribute(a.name);
    }
  }
  const svg = document.importNode(root, true);
  // Shrink to the panel but never beyond the natural size; the viewBox
  // keeps the proportions.
  const natural = svg.getAttribute('width');
  if (natural) svg.style.maxWidth = natural;
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  svg.setAttribute('id', 'graph');
  return svg;
}

// decorateGraph makes every session node a link to that session. The
// server writes each node as <g class="node"><title>NODE-ID</title>…</g>
// (as Graphviz does), naming nodes by session id.
function decorateGraph(svg, current) {
  for (const g of [...svg.querySelectorAll('g.node')]) {
    const title = g.querySelector('title');
    const id = title ? title.textContent.trim() : '';
    if (!/^ses_[0-9A-Za-z]{26}$/.test(id)) continue;
    g.dataset.sessionId = id;
    if (id === current) g.classList.add('current');
    const a = document.createElementNS(SVGNS, 'a');
    a.setAttribute('href', '#/s/' + encodeURIComponent(id));
    a.setAttribute('class', 'graph-link');
    a.dataset.sessionId = id;
    g.parentNode.insertBefore(a, g);
    a.appendChild(g);
  }
}

// ---------- timeline ----------

// loadTimeline shows the first page of the session's chunks (reset), or
// the next one: /v1's cursor pages, whose cursors say nothing to us but
// the page that follows, starting where the last one ended.
async function loadTimeline(id, reset) {
  if (reset) {
    $('#timeline').replaceChildren();
    state.loaded = 0;
    state.next = { cursor: '', at: 0 };
    state.pending.clear();
  }
  const next = state.next;
  if (!next) return; // the last page is shown; the live tail brings the rest
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (next.cursor) q.set('cursor', next.cursor);
  const page = await getJSON(`${sessionPath(id)}/chunks?${q}`);
  if (state.id !== id || state.next !== next) return;
  appendChunks(next.at, page.items);
  state.next = page.next_cursor ? { cursor: page.next_cursor, at: next.at + page.items.length } : null;
  state.len = Math.max(state.len, page.len);
  updateMore();
}

// appendChunks adds chunks [from, from+len) to the timeline if they follow
// what it shows, then any live chunks that were waiting for them.
function appendChunks(from, chunks, live) {
  const list = $('#timeline');
  if (from <= state.loaded) {
    for (const [i, c] of chunks.entries()) {
      if (from + i < state.loaded) continue; // already shown
      const li = chunkItem(from + i, c, true);
      if (live) li.classList.add('live');
      list.append(li);
      state.loaded = from + i + 1;
    }
  }
  for (let c; (c = state.pending.get(state.loaded)) !== undefined;) {
    state.pending.delete(state.loaded);
    list.append(chunkItem(state.loaded, c, true));
    list.lastChild.classList.add('live');
    state.loaded++;
  }
  list.dataset.count = String(state.loaded);
}

function updateMore() {
  const more = $('#timeline-more');
  more.hidden = state.loaded >= state.len || !state.next;
  more.textContent = `Load more (${state.loaded} of ${state.len} shown)`;
  $('#session-len') && ($('#session-len').textContent = state.len);
}

// chunkItem renders one chunk; forkable adds a "fork here" button.
function chunkItem(index, c, forkable) {
  const kind = c.kind || 'unknown';
  const head = el('div', { class: 'chunk-head' },
    el('span', { class: 'idx num', text: '#' + index }),
    el('span', { class: 'kind kind-' + kind, text: kind }),
    el('span', { class: 'node mono', text: c.node || '' }),
    el('time', { class: 'time', datetime: c.time || '', title: fmtTime(c.time), text: fmtClock(c.time) }),
    el('span', { class: 'summary', text: summary(c) }));
  if (forkable) {
    head.append(el('button', { type: 'button', class: 'fork-at', 'data-at': index + 1, title: `Fork keeping chunks 0–${index}`, text: 'fork here' }));
  }
  const li = el('li', { class: 'chunk', 'data-index': index, 'data-kind': kind, 'data-id': c.id || '' }, head);
  if (kind === 'tool_result' && c.tool_result) li.append(toolDetails(c.tool_result));
  else if (kind === 'assistant' && c.assistant && (c.assistant.tool_calls || []).length) li.append(callDetails(c.assistant.tool_calls));
  li.append(el('details', { class: 'raw' }, el('summary', { text: 'raw chunk' }), el('pre', { class: 'json', text: JSON.stringify(c, null, 2) })));
  return li;
}

function summary(c) {
  switch (c.kind) {
    case 'system': return firstLine(c.system && c.system.text);
    case 'user': return firstLine(c.user && c.user.text);
    case 'note': return firstLine(c.note && c.note.text);
    case 'assistant': {
      const t = c.assistant || {};
      const calls = (t.tool_calls || []).map((tc) => tc.name + '()').join(', ');
      return [firstLine(t.text || t.refusal), calls && 'calls ' + calls].filter(Boolean).join(' · ');
    }
    case 'tool_result': {
      const r = c.tool_result || {};
      const out = r.error ? `error ${r.error.kind}: ${r.error.message}` : firstLine(r.content, 100);
      const fx = (r.effects || []).length ? ` · ${r.effects.length} file${r.effects.length === 1 ? '' : 's'} changed` : '';
      return `${r.tool}${noteKinds(r.notes)} → ${out} (${fmtDuration(r.duration_ns)})${fx}`;
    }
    case 'model_call': {
      const m = c.model_call || {};
      const u = m.usage || {};
      return `${m.provider || ''}/${m.model || ''} · ${u.input_tokens || 0} in / ${u.output_tokens || 0} out · ${fmtDuration(m.latency_ns)}`;
    }
    case 'memory': {
      const m = c.memory || {};
      return [m.op, m.query, m.uri].filter(Boolean).join(' · ');
    }
    case 'placement': {
      const p = c.placement || {};
      return `${p.backend}${p.spec && p.spec.image ? ' ' + p.spec.image : ''}${p.sandbox_id ? ' (' + p.sandbox_id + ')' : ''}`;
    }
    case 'compress': {
      const x = c.compress || {};
      return `${x.count} chunks → ${firstLine(x.summary, 100)}`;
    }
    case 'decision': {
      const d = c.decision || {};
      return `${d.selector} chose ${d.choice}${d.reason ? ': ' + firstLine(d.reason, 80) : ''}`;
    }
    case 'approval': {
      const a = c.approval || {};
      return `${a.verdict} on ${a.subject}${a.by ? ' by ' + a.by : ''}`;
    }
    case 'error': {
      const f = c.error || {};
      return `${f.code}: ${firstLine(f.message)}`;
    }
  }
  return '';
}

function callDetails(calls) {
  const box = el('div', { class: 'calls' });
  for (const tc of calls) {
    box.append(el('div', { class: 'call', 'data-call-id': tc.id || '' },
      el('span', { class: 'call-name mono', text: tc.name }),
      el('pre', { class: 'args', text: pretty(tc.args !== undefined ? tc.args : tc.args_text) })));
  }
  return box;
}

// noteKinds is a tool result's note kinds for its one-line summary:
// " [restarted, truncated]", or '' without notes.
function noteKinds(notes) {
  return (notes || []).length ? ` [${notes.map((n) => n.kind).join(', ')}]` : '';
}

// toolNotes shows a tool result's evidence notes (a server restarted
// before the call, the output cut, a secret scrubbed): the runtime's words
// about the call, kept apart from the tool's output.
function toolNotes(notes) {
  const list = el('ul', { class: 'tool-notes' });
  for (const n of notes) {
    list.append(el('li', { class: 'tool-note', 'data-kind': n.kind },
      el('span', { class: 'note-kind mono', text: n.kind }), ' ', el('span', { class: 'note-text', text: n.text })));
  }
  return el('div', { class: 'tool-section' }, el('h4', { text: 'notes' }), list);
}

// toolDetails shows a tool call's evidence: arguments, output or error,
// its notes, duration, sandbox and the files it changed with their diffs.
function toolDetails(r) {
  const box = el('div', { class: 'tool', 'data-tool': r.tool, 'data-call-id': r.call_id || '' });
  box.append(el('div', { class: 'tool-meta' },
    el('span', { class: 'tool-name mono', text: r.tool }),
    el('span', { class: 'duration', 'data-ns': r.duration_ns || 0, text: fmtDuration(r.duration_ns) }),
    r.sandbox_id ? el('span', { class: 'sandbox mono', text: 'sandbox ' + r.sandbox_id }) : null,
    r.full_size ? el('span', { class: 'truncated', text: `output truncated (full: ${r.full_size} bytes, ${r.full_hash || ''})` }) : null));
  if ((r.notes || []).length) box.append(toolNotes(r.notes));
  box.append(el('div', { class: 'tool-section' }, el('h4', { text: 'arguments' }), el('pre', { class: 'args', text: pretty(r.args) || '{}' })));
  if (r.error) {
    box.append(el('div', { class: 'tool-section tool-error' }, el('h4', { text: 'error · ' + r.error.kind }), el('pre', { class: 'output', text: r.error.message })));
  }
  if (r.content || !r.error) {
    box.append(el('div', { class: 'tool-section' }, el('h4', { text: 'output' }), el('pre', { class: 'output', text: r.content || '' })));
  }
  if ((r.effects || []).length) {
    const fx = el('div', { class: 'effects' }, el('h4', { text: 'files' }));
    for (const e of r.effects) fx.append(effectItem(e));
    box.append(fx);
  }
  return box;
}

function effectItem(e) {
  const item = el('div', { class: 'effect', 'data-path': e.path, 'data-op': e.op },
    el('div', { class: 'effect-head' },
      el('span', { class: 'effect-op op-' + e.op, text: e.op }),
      el('span', { class: 'mono', text: e.path }),
      e.size ? el('span', { class: 'muted', text: `${e.size} bytes` }) : null,
      e.binary ? el('span', { class: 'muted', text: 'binary' }) : null));
  if (e.diff) item.append(diffBlock(e.diff, e.path));
  return item;
}

// diffBlock colours a unified diff line by line, and the code of each
// line by the syntax of path's language (see codeTokens).
function diffBlock(diff, path) {
  const pre = el('pre', { class: 'diff' });
  const lang = langOf(path);
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    let cls = 'diff-ctx';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'diff-file';
    else if (line.startsWith('@@')) cls = 'diff-hunk';
    else if (line.startsWith('+')) cls = 'diff-add';
    else if (line.startsWith('-')) cls = 'diff-del';
    const span = el('span', { class: 'diff-line ' + cls });
    if (!lang || cls === 'diff-file' || cls === 'diff-hunk' || line === '') span.textContent = line;
    else {
      span.append(line.slice(0, 1));
      for (const [k, text] of codeTokens(lang, line.slice(1))) span.append(k ? el('span', { class: 'tok-' + k, text }) : text);
    }
    pre.append(span, '\n');
  }
  return pre;
}

// Languages diffs are coloured for: keywords, line comment, quotes.
const LANGS = (() => {
  const w = (s) => new Set(s.split(/\s+/));
  const go = { kw: w('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota'), com: '//', q: '"\'`' };
  const py = { kw: w('and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self'), com: '#', q: '"\'' };
  const js = { kw: w('async await break case catch class const continue default delete do else export extends finally for function if import in instanceof let new of return switch this throw try typeof var void while yield null undefined true false'), com: '//', q: '"\'`' };
  const sh = { kw: w('if then else elif fi for while do done case esac function in return export local set'), com: '#', q: '"\'' };
  return { go, py, js, mjs: js, ts: js, tsx: js, jsx: js, sh, bash: sh };
})();

function langOf(path) {
  const m = /\.([A-Za-z0-9]+)$/.exec(path || '');
  return m ? LANGS[m[1].toLowerCase()] : undefined;
}

// codeTokens splits one line of code into [class, text] runs: kw, str,
// num, com, or '' for plain text. It sees one line at a time, as a diff
// shows code.
function codeTokens(lang, line) {
  const out = [];
  let plain = '';
  const push = (k, t) => { if (plain) out.push(['', plain]); plain = ''; out.push([k, t]); };
  for (let i = 0; i < line.length;) {
    const ch = line[i];
    if (line.startsWith(lang.com, i)) { push('com', line.slice(i)); break; }
    if (lang.q.includes(ch)) {
      let j = i + 1;
      while (j < line.length && line[j] !== ch) j += line[j] === '\\' && ch !== '`' ? 2 : 1;
      j = Math.min(j + 1, line.length);
      push('str', line.slice(i, j));
      i = j;
      continue;
    }
    const word = /^[A-Za-z0-9_]+/.exec(line.slice(i));
    if (word) {
      const t = word[0];
      if (/^[0-9]/.test(t)) push('num', t);
      else if (lang.kw.has(t)) push('kw', t);
      else plain += t;
      i += t.length;
      continue;
    }
    plain += ch;
    i++;
  }
  if (plain) out.push(['', plain]);
  return out;
}

// ---------- live tail ----------

function setTail(s, text) {
  const t = $('#tail-status');
  t.dataset.state = s;
  t.textContent = text || s;
}

// tailable says whether a session can still grow: closed, failed and
// archived sessions are final, so their page follows no live tail.
function tailable(info) {
  return !['closed', 'failed', 'archived'].includes(info && info.status);
}

function stopTail() {
  if (state.tail) state.tail.close();
  state.tail = null;
  setTail('off');
}

// onTailChunk shows a chunk the tail delivered. One that does not yet
// follow the timeline waits (a bounded number of them) for the chunks
// before it; beyond that, "load more" fetches it.
function onTailChunk(index, c) {
  state.len = Math.max(state.len, index + 1);
  if (index > state.loaded && state.pending.size < 5000) state.pending.set(index, c);
  appendChunks(index, [c], true);
  updateMore();
}

// onTailLive: the stream has sent what was committed before it went live.
// A small gap between the timeline's pages and the chunks the stream sent
// (the timeline was not at its end) is filled at once.
function onTailLive(data) {
  setTail('live');
  const len = JSON.parse(data).len;
  state.len = Math.max(state.len, len);
  if (state.next && len > state.loaded && len - state.loaded <= PAGE) {
    loadTimeline(state.id, false).catch((e) => showError(e.message));
  }
  updateMore();
}

// startTail follows GET /v1/sessions/{id}/events (see openStream) from
// where the timeline ends: after its last chunk when it shows them all,
// else after the last chunk the session had (those between stay behind
// "load more"). A stream sends what was committed after that, then "live",
// then each commit.
function startTail(id) {
  stopTail();
  const url = sessionPath(id) + '/events';
  const after = state.next ? state.len : state.loaded;
  const handlers = {
    live: (data) => onTailLive(data),
    chunk: (data) => { const c = JSON.parse(data); onTailChunk(c.index, c.chunk); },
    end: (data) => { stopTail(); setTail('ended', 'ended: ' + (JSON.parse(data).reason || '')); },
    error: (data) => { stopTail(); setTail('error', 'error: ' + errorText(data)); },
  };
  setTail('connecting');
  state.tail = openStream(url, handlers, (s) => { if (s === 'connecting') setTail('connecting'); }, after > 0 ? String(after - 1) : '');
}

// openStream follows the event stream at url from after the event lastId
// ('' for the start), calling handlers[name](data, lastEventId) for each
// event: with EventSource when no token is needed and it starts at the
// start, else with a fetch stream (EventSource can send neither an
// Authorization header nor a first Last-Event-ID). onState('connecting')
// says it is reconnecting; onState('closed') that the browser gave up
// (EventSource only). It returns {close()}.
function openStream(url, handlers, onState, lastId = '') {
  return state.token || lastId ? fetchStream(url, handlers, onState, lastId) : sourceStream(url, handlers, onState);
}

function sourceStream(url, handlers, onState) {
  const es = new EventSource(url);
  for (const [name, fn] of Object.entries(handlers)) {
    es.addEventListener(name, (ev) => { if (ev.data !== undefined) fn(ev.data, ev.lastEventId); });
  }
  es.onerror = () => onState(es.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
  return { close: () => es.close() };
}

function fetchStream(url, handlers, onState, lastId) {
  const ctl = new AbortController();
  const run = async () => {
    while (!ctl.signal.aborted) {
      try {
        const headers = authHeaders({ Accept: 'text/event-stream' });
        if (lastId) headers['Last-Event-ID'] = lastId;
        const res = await fetch(url, { headers, signal: ctl.signal });
        if (!res.ok) {
          if (res.status === 401) $('#token-form').hidden = false;
          throw new Error(`${res.status} ${res.statusText}`);
        }
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            let name = 'message'; let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) name = line.slice(7);
              else if (line.startsWith('data: ')) data += line.slice(6);
              else if (line.startsWith('id: ')) lastId = line.slice(4);
            }
            if (handlers[name]) handlers[name](data, lastId);
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      if (ctl.signal.aborted) return;
      onState('connecting');
      await new Promise((r) => setTimeout(r, 2000));
    }
  };
  run();
  return { close: () => ctl.abort() };
}

// ---------- compare and merge ----------

function fillComparePicker(v) {
  const sel = $('#compare-with');
  const lin = v.lineage || {};
  const opts = [el('option', { value: '', text: 'compare with…' })];
  for (const p of lin.parents || []) opts.push(el('option', { value: p, text: 'parent ' + p }));
  for (const c of v.children || []) opts.push(el('option', { value: c, text: 'child ' + c }));
  sel.replaceChildren(...opts);
}

async function runCompare(a, b) {
  const box = $('#compare');
  try {
    const cmp = await getJSON(`/v1/sessions:compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
    if (state.id !== a) return;
    state.compareWith = b;
    $('#compare-prefix-summary').textContent = `${cmp.prefix} common chunk${cmp.prefix === 1 ? '' : 's'}`;
    const prefix = $('#compare-prefix');
    prefix.open = false;
    prefix.dataset.prefix = String(cmp.prefix);
    prefix.dataset.loaded = '';
    $('#compare-prefix-list').replaceChildren();
    fillColumn('a', cmp.a, cmp.a_suffix);
    fillColumn('b', cmp.b, cmp.b_suffix);
    const merge = $('#merge');
    merge.hidden = false;
    merge.textContent = `Merge ${shortID(b)} into ${shortID(a)}`;
    box.hidden = false;
    box.dataset.a = a;
    box.dataset.b = b;
  } catch (e) {
    showError(e.message);
  }
}

function fillColumn(side, info, suf) {
  $(`#compare-${side}-title`).replaceChildren(sessionLink(info.id), ` · ${suf.chunks.length}${suf.truncated ? '+' : ''} chunk${suf.chunks.length === 1 ? '' : 's'} after the prefix`);
  const list = $(`#compare-${side}`);
  list.replaceChildren(...suf.chunks.map((c, i) => chunkItem(suf.from + i, c, false)));
  if (!suf.chunks.length) list.append(el('li', { class: 'muted', text: 'nothing after the common prefix' }));
}

async function loadPrefix() {
  const p = $('#compare-prefix');
  if (!p.open || p.dataset.loaded) return;
  p.dataset.loaded = '1';
  const n = Number(p.dataset.prefix || 0);
  const page = await getJSON(`${sessionPath(state.id)}/chunks?limit=${Math.max(1, Math.min(n, PAGE))}`);
  const list = $('#compare-prefix-list');
  list.replaceChildren(...page.items.slice(0, n).map((c, i) => chunkItem(i, c, false)));
  if (n > PAGE) list.append(el('li', { class: 'muted', text: `… ${n - PAGE} more shared chunks` }));
}

// ---------- cluster ----------

// The cluster page shows GET /v1/cluster (a cluster.Report: workers, pools,
// runs) and follows GET /v1/cluster/events, whose every "status" event is a
// whole new report; verdicts go to POST /v1/approvals/{id}.

let clusterSeq = 0;

function setClusterLive(s, text) {
  const t = $('#cluster-live');
  t.dataset.state = s;
  t.textContent = text || s;
}

function stopCluster() {
  clusterSeq++; // a load in flight no longer renders
  if (state.cluster) state.cluster.close();
  state.cluster = null;
  setClusterLive('off');
}

async function openCluster() {
  stopTail();
  stopCluster();
  state.id = null;
  show('cluster');
  document.title = 'rath — cluster';
  $('#cluster-by').value = localStorage.getItem('rath.by') || '';
  const seq = clusterSeq;
  setAppState('loading');
  try {
    const rep = await getJSON('/v1/cluster');
    if (seq !== clusterSeq) return;
    renderCluster(rep);
    setAppState('ready');
  } catch (e) {
    if (seq !== clusterSeq) return;
    if (e instanceof ApiError && e.reason === 'no_cluster') {
      $('#cluster-none').textContent = e.message;
      $('#cluster-none').hidden = false;
      $('#cluster-body').hidden = true;
      setAppState('ready');
      return;
    }
    showError(e.message);
    setAppState('error');
    return;
  }
  setClusterLive('connecting');
  state.cluster = openStream('/v1/cluster/events', {
    status: (data) => {
      if (seq !== clusterSeq) return;
      setClusterLive('live');
      renderCluster(JSON.parse(data));
    },
    error: (data) => setClusterLive('error', 'error: ' + errorText(data)),
    end: (data) => {
      stopCluster();
      setClusterLive('ended', 'ended: ' + (JSON.parse(data).reason || ''));
    },
  }, (s) => setClusterLive(s === 'closed' ? 'error' : s, s === 'closed' ? 'disconnected' : s));
}

// refreshCluster shows the cluster's status now, not at the next event.
async function refreshCluster() {
  const seq = clusterSeq;
  try {
    const rep = await getJSON('/v1/cluster');
    if (seq === clusterSeq) renderCluster(rep);
  } catch (e) {
    showError(e.message);
  }
}

function renderCluster(rep) {
  rep = rep || {};
  const runs = rep.runs || [];
  $('#cluster-none').hidden = true;
  $('#cluster-body').hidden = false;
  fillClusterTable('workers', (rep.workers || []).map(workerRow));
  fillClusterTable('pools', (rep.pools || []).map(poolRow));
  fillClusterTable('runs', runs.map(runRow));
  renderPending(runs.filter((r) => r.state === 'waiting_approval' || r.state === 'needs_review'));
  $('#cluster-updated').textContent = 'updated ' + fmtClock(new Date().toISOString());
}

function fillClusterTable(name, rows) {
  $(`#cluster-${name} tbody`).replaceChildren(...rows);
  $(`#${name}-empty`).hidden = rows.length > 0;
  $(`#${name}-count`).textContent = String(rows.length);
  $(`#cluster-${name}`).dataset.count = String(rows.length);
}

function stateBadge(s) {
  return el('span', { class: 'state state-' + s, 'data-state': s, text: s });
}

function sessionLinks(ids) {
  return (ids || []).flatMap((id) => [sessionLink(id, shortID(id)), ' ']);
}

function workerRow(w) {
  const alive = !!w.alive;
  // A worker that is not alive is dead (and says why) or stopped.
  const st = alive ? (w.state || 'alive') : (w.state === 'stopped' ? 'stopped' : 'dead');
  return el('tr', { 'data-worker-id': w.id, 'data-alive': String(alive), 'data-state': st },
    el('td', { class: 'mono', text: w.id }),
    el('td', {}, stateBadge(st), !alive && w.why && w.why !== st ? el('span', { class: 'why', text: ' ' + w.why }) : null),
    el('td', { class: 'mono', text: w.pool || '' }),
    el('td', { text: w.host || '' }),
    el('td', { class: 'num', text: w.pid || '' }),
    el('td', { class: 'time', title: fmtTime(w.beat), text: fmtAgo(w.beat) }),
    el('td', { class: 'runs' }, ...sessionLinks(w.runs),
      (w.holding || 0) > (w.runs || []).length ? el('span', { class: 'more', text: `+${w.holding - (w.runs || []).length} more` }) : null),
    el('td', { class: 'mono', text: kv(w.offers) }));
}

function poolRow(p) {
  const workers = p.workers || [];
  const serves = (p.serves || []).length ? ' · serves ' + p.serves.join(', ') : '';
  return el('tr', { 'data-queue': p.queue },
    el('td', { class: 'mono', text: p.queue }),
    el('td', { class: 'num queued', text: p.queued || 0 }),
    el('td', { class: 'num running', text: p.running || 0 }),
    el('td', { class: 'workers' }, el('span', { class: 'num', text: workers.length }), workers.length ? el('span', { class: 'mono muted', text: ' ' + workers.join(', ') }) : null),
    el('td', { class: 'mono', text: kv(p.offers) + serves }));
}

// runWhy is what a run's record says of where it is and why.
function runWhy(r) {
  return [
    r.why,
    r.error && 'error: ' + r.error,
    r.cancel && 'cancel: ' + r.cancel,
    r.pinned && `pinned to ${r.host || 'its host'}: ${r.pinned}`,
  ].filter(Boolean).join(' · ');
}

function runRow(r) {
  return el('tr', { 'data-run-id': r.id, 'data-state': r.state },
    el('td', {}, sessionLink(r.id), r.output ? el('span', { class: 'muted' }, ' → ', sessionLink(r.output, r.state === 'waiting_approval' ? 'paused' : 'output')) : null),
    el('td', { class: 'mono', text: r.workflow || '' }),
    el('td', {}, stateBadge(r.state)),
    el('td', { class: 'mono', text: r.worker || '' }),
    el('td', { class: 'time', title: fmtTime(r.since), text: fmtAgo(r.since) }),
    el('td', { class: 'why', text: runWhy(r) }));
}

// renderPending updates the runs waiting for a person in place: a row
// that stays keeps its reason field (and its focus) while the page
// refreshes.
function renderPending(runs) {
  const body = $('#cluster-pending tbody');
  const want = new Map(runs.map((r) => [r.id + ' ' + r.state, r]));
  for (const tr of [...body.children]) if (!want.has(tr.dataset.key)) tr.remove();
  const have = new Map([...body.children].map((tr) => [tr.dataset.key, tr]));
  for (const [key, r] of want) {
    let tr = have.get(key);
    if (!tr) {
      tr = pendingRow(key, r);
      body.append(tr);
    }
    fillPendingRow(tr, r);
  }
  $('#pending-empty').hidden = runs.length > 0;
  $('#pending-count').textContent = String(runs.length);
  $('#cluster-pending').dataset.count = String(runs.length);
}

function pendingRow(key, r) {
  const approval = r.state === 'waiting_approval';
  const decide = el('td', { class: 'decide' });
  if (approval) {
    decide.append(
      el('input', { type: 'text', class: 'reason', placeholder: 'reason (optional)', 'aria-label': 'Reason', autocomplete: 'off', maxlength: 2000 }),
      el('button', { type: 'button', class: 'approve', 'data-run-id': r.id, text: 'Approve' }),
      el('button', { type: 'button', class: 'deny', 'data-run-id': r.id, text: 'Deny' }),
      el('span', { class: 'verdict muted' }));
  } else {
    decide.append(el('span', { class: 'muted', text: 'settle it with' }),
      el('code', { class: 'review-cmd', text: `rath review ${r.id} --happened|--not-happened|--abort` }));
  }
  return el('tr', { 'data-key': key, 'data-run-id': r.id, 'data-state': r.state },
    el('td', {}, sessionLink(r.id)),
    el('td', { class: 'mono', text: r.workflow || '' }),
    el('td', {}, stateBadge(r.state), el('div', { class: 'muted', text: approval ? 'an approval' : 'a review of calls whose effect is unknown' })),
    el('td', { class: 'time since' }),
    el('td', { class: 'what' }),
    decide);
}

function fillPendingRow(tr, r) {
  const since = tr.querySelector('.since');
  since.textContent = fmtAgo(r.since);
  since.title = fmtTime(r.since);
  const what = [];
  if (r.state === 'waiting_approval' && r.output) what.push(el('div', {}, 'paused session ', sessionLink(r.output, shortID(r.output))));
  if (r.review) {
    const u = r.review;
    what.push(el('div', {}, `unsettled in `, sessionLink(u.session, shortID(u.session)), u.node ? ` at ${u.node}` : ''));
    const calls = el('ul', { class: 'unsettled' });
    for (const c of u.calls || []) {
      calls.append(el('li', { 'data-call-id': c.id || '' },
        el('span', { class: 'call-name mono', text: c.name }), ' ', el('span', { class: 'mono muted', text: c.id || '' }),
        el('pre', { class: 'args', text: pretty(c.args !== undefined ? c.args : c.args_text) || '{}' })));
    }
    what.push(calls);
  }
  const why = runWhy(r);
  if (why) what.push(el('div', { class: 'why', text: why }));
  tr.querySelector('.what').replaceChildren(...what);
}

// decide sends a verdict on the approval the row's run waits for.
async function decide(tr, approve) {
  const by = $('#cluster-by').value.trim();
  if (!by) {
    showError('Say who decides: fill in "Decide as" first (the verdict records it).');
    $('#cluster-by').focus();
    return;
  }
  localStorage.setItem('rath.by', by);
  const id = tr.dataset.runId;
  const reason = tr.querySelector('input.reason').value.trim();
  const buttons = [...tr.querySelectorAll('button')];
  const note = tr.querySelector('.verdict');
  for (const b of buttons) b.disabled = true;
  note.textContent = approve ? 'approving…' : 'denying…';
  try {
    await postJSON(`/v1/approvals/${encodeURIComponent(id)}`, { verdict: approve ? 'approve' : 'deny', by, reason });
    showError('');
    const verdict = approve ? 'approved' : 'denied';
    tr.dataset.verdict = verdict;
    note.textContent = `${verdict} by ${by}`;
    refreshCluster();
  } catch (e) {
    for (const b of buttons) b.disabled = false;
    note.textContent = '';
    showError(e.message);
  }
}

// ---------- actions ----------

async function download(format) {
  try {
    const res = await api(`${sessionPath(state.id)}/export?format=${format}`, { headers: { Accept: 'application/x-ndjson' } });
    const blob = await res.blob();
    const m = /filename="?([^";]+)"?/.exec(res.headers.get('Content-Disposition') || '');
    const a = el('a', { href: URL.createObjectURL(blob), download: m ? m[1] : `${state.id}.jsonl` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  } catch (e) {
    showError(e.message);
  }
}

async function fork(at) {
  try {
    const out = await postJSON(sessionPath(state.id) + '/fork', at === undefined ? {} : { at });
    location.hash = '#/s/' + encodeURIComponent(out.id);
  } catch (e) {
    showError(e.message);
  }
}

async function merge() {
  try {
    const out = await postJSON('/v1/sessions:merge', { a: state.id, b: state.compareWith });
    location.hash = '#/s/' + encodeURIComponent(out.id);
  } catch (e) {
    showError(e.message);
  }
}

// ---------- wiring ----------

function debounce(fn, ms) {
  let t;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}

function init() {
  $('#filters').addEventListener('submit', (e) => { e.preventDefault(); loadList(); });
  $('#list-more').addEventListener('click', () => loadList(true));
  const live = debounce(loadList, 200);
  $('#filter-q').addEventListener('input', live);
  $('#filter-op').addEventListener('input', live);
  $('#filter-status').addEventListener('change', loadList);
  $('#token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    state.token = $('#token-input').value.trim();
    sessionStorage.setItem('rath.token', state.token);
    $('#token-form').hidden = true;
    state.id = null;
    route();
  });
  $('#fork').addEventListener('click', () => fork());
  $('#timeline').addEventListener('click', (e) => {
    const b = e.target.closest('button.fork-at');
    if (b) fork(Number(b.dataset.at));
  });
  $('#timeline-more').addEventListener('click', () => loadTimeline(state.id, false).catch((e) => showError(e.message)));
  $('#export-jsonl').addEventListener('click', () => download('jsonl'));
  $('#export-openrath').addEventListener('click', () => download('openrath'));
  $('#tail-toggle').addEventListener('click', () => {
    state.tailPaused = !state.tailPaused;
    $('#tail-toggle').textContent = state.tailPaused ? 'Resume live tail' : 'Pause live tail';
    if (state.tailPaused) stopTail();
    else if (state.id) startTail(state.id); // from where the timeline ends: nothing is skipped
  });
  $('#compare-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const other = $('#compare-id').value.trim() || $('#compare-with').value;
    if (!other) return showError('Pick or paste a session to compare with.');
    location.hash = `#/s/${encodeURIComponent(state.id)}/compare/${encodeURIComponent(other)}`;
  });
  $('#compare-prefix').addEventListener('toggle', () => loadPrefix().catch((e) => showError(e.message)));
  $('#merge').addEventListener('click', merge);
  $('#cluster-by-form').addEventListener('submit', (e) => e.preventDefault());
  $('#cluster-by').addEventListener('change', () => localStorage.setItem('rath.by', $('#cluster-by').value.trim()));
  $('#cluster-pending').addEventListener('click', (e) => {
    const b = e.target.closest('button.approve, button.deny');
    if (b) decide(b.closest('tr'), b.classList.contains('approve'));
  });
  // A hidden tab lets its live tail go, so tabs left open do not hold
  // the browser's few connections to this server; it catches up when
  // shown again.
  document.addEventListener('visibilitychange', () => {
    if (!state.id || state.tailPaused || !tailable(state.info)) return;
    if (document.hidden) {
      stopTail();
      setTail('off', 'paused while hidden');
    } else if (!state.tail) {
      startTail(state.id); // from where the timeline ends: it catches up
    }
  });
  window.addEventListener('hashchange', route);
  route();
}

init();
