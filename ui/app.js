// The operator's dashboard (docs/operations.md, "Dashboard"): views over /api, the same
// identities and rules as the API (operators see everything, a user sees their own), kept
// live by /api/events.
import { busyColour, gantt, levelColours } from './gantt.js';

const view = document.getElementById('view');
const hour = 3600e3;
const schedule = { span: 24 * hour, from: undefined };

/** GET (or POST) under /api; a problem document becomes an Error with its detail. */
async function api(path, init = {}) {
  // The server takes a request that may change something only with a header no form on another site can set.
  const response = await fetch(path, { ...init, headers: { 'x-requested-with': 'wsag-dashboard', ...init.headers } });
  const text = await response.text();
  const body = text ? JSON.parse(text) : undefined;
  // Over TLS a 401 most often means the browser presented no client certificate.
  const hint = response.status === 401 && location.protocol === 'https:' ? ' (load your client certificate into the browser: docs/operations.md, "The dashboard over TLS")' : '';
  if (!response.ok) throw new Error(`${body?.detail ?? body?.title ?? `${response.status} ${response.statusText}`}${hint}`);
  return body;
}

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    // Through the CSSOM: the page's policy allows no inline style attributes.
    else if (k === 'style') node.style.cssText = v;
    else if (v !== undefined && v !== false) node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) node.append(c instanceof Node ? c : String(c));
  return node;
}

function table(headers, rows, onClick) {
  return h('table', {}, h('thead', {}, h('tr', {}, headers.map((t) => h('th', {}, t)))),
    h('tbody', {}, rows.map((r) => h('tr', onClick ? { class: 'clickable', onclick: () => onClick(r.key), 'data-key': r.key } : {}, r.cells.map((c) => h('td', {}, c ?? ''))))));
}

const money = (m) => (m ? `${m.amount.toFixed(2)} ${m.currency}` : '');
const when = (iso) => (iso ? String(iso).replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '');
/** An audit entry's details, short: hashes cut, allocations as nodes and times. */
const details = (d) => Object.entries(d ?? {}).map(([k, v]) =>
  `${k}: ${k.endsWith('Sha256') ? `${String(v).slice(0, 12)}…` : v && typeof v === 'object' && 'start' in v ? `${(v.nodeIds ?? []).join(' ') || v.nodes} ${when(v.start)}–${when(v.end)}` : typeof v === 'object' ? JSON.stringify(v) : v}`).join('; ');
const problem = (error) => h('p', { class: 'error', role: 'alert' }, error.message);

async function showSchedule() {
  const now = Date.now();
  schedule.from ??= now - hour;
  const to = schedule.from + schedule.span;
  // Only the bookings in view: the whole plan grows with the live agreements.
  const window = new URLSearchParams({ from: new Date(schedule.from).toISOString(), to: new Date(to).toISOString() });
  const [plan, nodes, negotiations] = await Promise.all([api(`/api/plan?${window}`), api('/api/nodes'), api('/api/negotiations?limit=1000')]);
  const holds = new Map();
  for (const n of negotiations) for (const o of n.offers) if (o.hold?.state === 'Held') holds.set(o.offerId, o.hold.expiresAt);
  const zoom = (span) => h('button', { onclick: () => { schedule.span = span; render(); }, 'data-zoom': span / hour }, span >= 168 * hour ? `${span / (168 * hour)} week${span > 168 * hour ? 's' : ''}` : span >= 24 * hour ? `${span / (24 * hour)} day` : `${span / hour} h`);
  const shift = (by, label) => h('button', { onclick: () => { schedule.from += by * schedule.span; render(); } }, label);
  view.replaceChildren(
    h('h2', {}, 'Schedule'),
    h('div', { class: 'toolbar' },
      zoom(6 * hour), zoom(24 * hour), zoom(168 * hour), zoom(4 * 168 * hour),
      shift(-0.5, '◀ earlier'), h('button', { onclick: () => { schedule.from = Date.now() - hour; render(); } }, 'now'), shift(0.5, 'later ▶'),
      h('span', { class: 'muted' }, `${when(new Date(schedule.from).toISOString())} to ${when(new Date(to).toISOString())}; ${plan.scope === 'own' ? `your bookings and others' busy time: ${plan.bookings.length} in view` : `${plan.total} bookings (${plan.bookings.length} in view)`}, ${nodes.nodes.filter((n) => n.failed).length} failed nodes, ${plan.problematic.length} ${plan.problematic.length === 1 ? 'promise' : 'promises'} at risk`)),
    h('div', { class: 'legend' }, Object.entries(levelColours).map(([level, c]) => h('span', { style: `--c:${c}` }, level)), h('span', { style: '--c:#fff' }, 'hold (dashed)'), h('span', { style: '--c:#6cc08b59' }, 'spare node (pale, dashed)'), h('span', { style: '--c:repeating-linear-gradient(45deg,#0005 0 2px,#0000 2px 6px)' }, 'restart piece'), h('span', { style: '--c:radial-gradient(#0007 30%,#fffa 35%) 0 0/4px 4px' }, 'preparation and release of the nodes'), plan.scope === 'own' ? h('span', { style: `--c:${busyColour}` }, 'another party\'s booking') : ''),
    h('div', { class: 'gantt', id: 'gantt' }, gantt({ plan, nodes: nodes.nodes, holds, from: schedule.from, to, now, width: Math.max(800, view.clientWidth - 4), open: (id) => { location.hash = `#/agreements/${id}`; } })),
    plan.problematic.length ? h('div', {}, h('h3', {}, 'Promises at risk (the scheduler cannot yet keep them)'), table(['booking', 'reason'], plan.problematic.map((p) => ({ key: p.id, cells: [p.id, p.reason] })))) : '',
  );
}

async function showAgreements() {
  const agreements = (await api('/api/agreements?limit=1000')).reverse();
  const search = h('input', { type: 'search', placeholder: 'search id, name, state, template, initiator', 'aria-label': 'search agreements' });
  const guarantee = h('select', { 'aria-label': 'guarantee state' }, ['any guarantee state', 'Violated', 'NotDetermined', 'Fulfilled', 'none'].map((g) => h('option', { value: g }, g)));
  const list = h('div');
  const fill = () => {
    const q = search.value.trim().toLowerCase();
    const g = guarantee.value;
    const shown = agreements.filter((a) => (!q || [a.id, a.name, a.state, a.template, a.initiator].some((v) => String(v ?? '').toLowerCase().includes(q))) && (g === 'any guarantee state' || a.guarantee === g))
      // Violated agreements first: they are what an operator looks for.
      .sort((a, b) => Number(b.guarantee === 'Violated') - Number(a.guarantee === 'Violated'));
    list.replaceChildren(shown.length === 0
      ? h('p', { class: 'muted', 'data-empty': '' }, q || g !== 'any guarantee state' ? `no agreement matches${q ? ` "${search.value.trim()}"` : ''}${g !== 'any guarantee state' ? ` with guarantee state ${g}` : ''}` : 'no agreements yet')
      : table(['agreement', 'name', 'state', 'guarantee', 'template', 'initiator', 'nodes', 'start', 'end', 'price'],
        shown.map((a) => ({ key: a.id, cells: [h('span', { class: 'id' }, a.id), a.name, h('span', { class: 'state' }, a.state), h('span', { class: a.guarantee === 'Violated' ? 'bad' : a.guarantee === 'Fulfilled' ? 'ok' : '' }, a.guarantee), a.template, a.initiator, a.nodes, when(a.start), when(a.end), money(a.price)] })),
        (id) => { location.hash = `#/agreements/${id}`; }));
  };
  search.addEventListener('input', fill);
  guarantee.addEventListener('change', fill);
  fill();
  view.replaceChildren(h('h2', {}, `Agreements (${agreements.length})`), h('div', { class: 'toolbar' }, search, guarantee), list);
}

async function showAgreement(id) {
  const a = await api(`/api/agreements/${encodeURIComponent(id)}`);
  // The report as written for people (the JSON form is for programs).
  const reportResponse = await fetch(`/api/agreements/${encodeURIComponent(id)}/report?format=text`);
  const report = reportResponse.ok ? await reportResponse.text() : undefined;
  const sig = a.signatures;
  view.replaceChildren(
    h('h2', {}, `Agreement ${a.id}`),
    h('dl', {},
      h('dt', {}, 'state'), h('dd', { class: 'state', 'data-field': 'state' }, a.state),
      h('dt', {}, 'name / template'), h('dd', {}, `${a.name ?? ''} (${a.template})`),
      h('dt', {}, 'initiator'), h('dd', {}, a.initiator),
      h('dt', {}, 'terms'), h('dd', {}, documentView(a.id)),
      h('dt', {}, 'service terms'), h('dd', {}, a.serviceTerms.map((t) => `${t.termName}: ${t.state}`).join(', ')),
      h('dt', {}, 'guarantee terms'), h('dd', {}, a.guaranteeTerms.map((t) => `${t.termName}: ${t.state}`).join(', ') || 'none'),
      h('dt', {}, 'asked'), h('dd', {}, `${a.request.nodeCount} nodes, ${a.request.guaranteeLevel}${a.request.runtimeSeconds ? `, ${a.request.runtimeSeconds} s` : ''}${a.request.deadline ? `, deadline ${when(a.request.deadline)}` : ''}${a.request.interactive ? ', interactive' : ''}${a.request.bid ? `, bid ${a.request.bid}/node-hour` : ''}`),
      h('dt', {}, 'allocation'), h('dd', { 'data-field': 'allocation' }, a.allocation ? `${a.allocation.nodes} nodes ${when(a.allocation.start)} to ${when(a.allocation.end)}${a.allocation.segments ? `; pieces: ${a.allocation.segments.map((s) => `${s.nodeIds.join(' ')} ${when(s.start)}–${when(s.end)}${s.restart ? ' (restart)' : ''}`).join('; ')}` : ''}` : 'none'),
      h('dt', {}, 'price'), h('dd', {}, money(a.price)),
      h('dt', {}, 'signatures'), h('dd', { class: sig.signed ? (sig.verified ? 'ok' : 'bad') : 'muted', 'data-field': 'signatures' },
        !sig.signed ? 'not signed' : sig.verified ? `verified: provider ${sig.provider}${sig.initiator ? `, countersigned by ${sig.initiator}` : ''}` : `not verified: ${sig.reason}`),
    ),
    h('h3', {}, 'Audit history'),
    a.history.length ? table(['#', 'at', 'actor', 'action', 'details'], a.history.map((e) => ({ key: String(e.seq), cells: [e.seq, when(e.at), e.actor, e.action, details(e.details)] }))) : h('p', { class: 'muted' }, 'no audit trail in this store'),
    h('h3', {}, 'Post-runtime report'),
    report ? h('pre', { 'data-field': 'report' }, report) : h('p', { class: 'muted' }, 'not yet: the job has not ended'),
  );
}

/** The agreement document as text, read when opened: shown, never rendered, whatever markup it carries. */
function documentView(id) {
  const text = h('pre', { class: 'document', 'data-field': 'document' });
  const box = h('details', {}, h('summary', {}, 'the agreement document (XML)'), text);
  box.addEventListener('toggle', async () => {
    if (!box.open || text.textContent) return;
    const response = await fetch(`/api/agreements/${encodeURIComponent(id)}/document`);
    text.textContent = await response.text();
  });
  return box;
}

async function showNegotiations() {
  const negotiations = (await api('/api/negotiations?limit=1000')).reverse();
  const rows = negotiations.flatMap((n) => n.offers.map((o, i) => ({
    key: `${n.id}/${o.offerId}`,
    cells: [i === 0 ? n.id : '', i === 0 ? `${n.state} (${n.rounds} rounds)` : '', o.offerId, o.creator, o.state, money(o.price), o.hold ? `${o.hold.state} until ${when(o.hold.expiresAt)}${o.hold.charged ? `, charged ${money(o.hold.charged)}` : ''}` : '', o.note ?? ''],
  })));
  view.replaceChildren(h('h2', {}, `Negotiations (${negotiations.length})`), table(['negotiation', 'state', 'offer', 'from', 'offer state', 'price', 'hold', 'note'], rows));
}

async function showNodes() {
  const { nodes } = await api('/api/nodes');
  const act = async (node, event) => {
    try {
      await api(`/api/nodes/${encodeURIComponent(node)}/${event}`, { method: 'POST' });
      await show();
    } catch (error) {
      view.prepend(problem(error));
    }
  };
  view.replaceChildren(h('h2', {}, `Nodes (${nodes.length})`), table(['node', 'state', 'memory GB', 'CPUs', 'interconnect', 'island', 'properties', ''],
    nodes.map((n) => ({ key: n.id, cells: [n.id, h('span', { class: n.failed ? 'bad' : 'ok' }, n.failed ? 'failed' : 'up'), n.memoryGB, n.cpus, n.interconnect, n.island, [n.buffer ? 'buffer' : '', ...(n.securityPolicies ?? [])].filter(Boolean).join(', '),
      n.failed ? h('button', { onclick: () => act(n.id, 'repair'), 'data-action': `repair-${n.id}` }, 'repair') : h('button', { class: 'danger', onclick: () => act(n.id, 'fail'), 'data-action': `fail-${n.id}` }, 'fail')] }))));
}

async function showAccounts() {
  const { accounts } = await api('/api/accounts');
  const shares = await api('/api/vo').catch(() => undefined);
  view.replaceChildren(
    h('h2', {}, `Accounts (${accounts.length})`),
    table(['account', 'kind', 'owner', 'funds', 'held', 'available', 'overdraft'], accounts.map((a) => ({ key: a.id, cells: [a.id, a.kind, a.owner, a.funds?.toFixed(2), a.held?.toFixed(2), a.available?.toFixed(2), a.overdraft?.kind ?? ''] }))),
    h('h3', {}, 'VO shares this epoch'),
    shares?.policy ? table(['share', 'level', 'limit', 'of site', 'entitled node-hours', 'used node-hours'], shares.shares.map((s) => ({ key: s.path, cells: [s.path, s.level, s.limit, `${(s.share * 100).toFixed(1)} %`, s.entitledNodeHours, s.usedNodeHours] }))) : h('p', { class: 'muted' }, shares ? 'this site has no VO usage policy (WSAG_VO_POLICY_FILE)' : 'the VO shares are for operators'),
  );
}

const views = { schedule: showSchedule, agreements: showAgreements, negotiations: showNegotiations, nodes: showNodes, accounts: showAccounts };
let rendering = Promise.resolve();

async function show() {
  // Not ready until this view is drawn: the one before may have had the same name (an agreement, then the list).
  delete document.body.dataset.ready;
  const [, name = 'schedule', id] = location.hash.split('/');
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.view === name);
  try {
    await (name === 'agreements' && id ? showAgreement(decodeURIComponent(id)) : (views[name] ?? showSchedule)());
    document.body.dataset.ready = name;
  } catch (error) {
    view.replaceChildren(problem(error));
    document.body.dataset.ready = name;
  }
}

function render() {
  rendering = rendering.then(show);
  return rendering;
}

window.addEventListener('hashchange', render);
// Live: any change the server tells us about redraws the current view (coalesced).
let pending;
const events = new EventSource('/api/events');
const live = document.getElementById('live');
events.onopen = () => { live.textContent = 'live'; live.className = 'on'; };
events.onerror = () => { live.textContent = 'reconnecting'; live.className = ''; };
for (const kind of ['agreement', 'replan']) {
  events.addEventListener(kind, () => {
    clearTimeout(pending);
    pending = setTimeout(render, 200);
  });
}
render();
