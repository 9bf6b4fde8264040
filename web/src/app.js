// SPDX-License-Identifier: GPL-2.0-only
// autoprof's live web view. Everything it shows comes from the daemon's own endpoints:
// /api/v1/profiles and /api/v1/processes for the pickers, /api/v1/timeline for the timeline, the
// pprof endpoints in folded form for the flame graphs, the function table and the sandwich
// view (trees built here), and /api/v1/probes for probe latency. The choices live in the URL's
// fragment, so a view can be linked to.
import flamegraph, { colorMapper, tooltip } from 'd3-flame-graph';
import { select } from 'd3-selection';
import { Drill } from './drill.js';
import { FunctionTable, parseStacks, sandwich, stackTree } from './functions.js';
import { Timeline } from './timeline.js';
import './style.css';

const REFRESH_MS = 5000;
const SVG_NS = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

// A fragment names only what differs from these.
// start and end (Unix seconds) pick a range instead of the last `seconds`; cmp compares it with
// an earlier one; fn is the function of the sandwich view; src the function of the source
// view; span is the timeline's reach.
const DEFAULTS = { type: 'cpu', pid: '', seconds: 30, q: '', probe: '', live: true, topdown: true,
	start: 0, end: 0, cmp: '', fn: '', src: '', where: '', span: 3600 };
const CMP_SHIFT = { before: (s, e) => e - s, hour: () => 3600 };
const state = { ...DEFAULTS };
let profiles = [];
let probeList = [];
let probesPresent = false;
let busy = false;
let queued = null;

class HttpError extends Error {
	constructor(status, text) {
		super(`HTTP ${status}: ${text.trim()}`);
		this.status = status;
	}
}

async function fetchOk(url, init) {
	const r = await fetch(url, { cache: 'no-store', ...init });
	if (!r.ok)
		throw new HttpError(r.status, await r.text());
	return r;
}
const getJSON = async (url) => (await fetchOk(url)).json();
const getText = async (url) => (await fetchOk(url)).text();

function readHash() {
	const p = new URLSearchParams(location.hash.slice(1));
	Object.assign(state, DEFAULTS);
	for (const k of ['type', 'pid', 'q', 'probe', 'fn', 'src', 'where'])
		if (p.has(k))
			state[k] = p.get(k);
	if (p.has('seconds'))
		state.seconds = Number(p.get('seconds')) || 30;
	for (const k of ['start', 'end', 'span'])
		if (p.has(k))
			state[k] = Number(p.get(k)) || DEFAULTS[k];
	if (!(state.start < state.end))
		state.start = state.end = 0;
	if (p.has('cmp') && CMP_SHIFT[p.get('cmp')])
		state.cmp = p.get('cmp');
	if (p.has('live'))
		state.live = p.get('live') !== '0';
	if (p.has('topdown'))
		state.topdown = p.get('topdown') !== '0';
}

function writeHash() {
	const p = new URLSearchParams();
	p.set('type', state.type);
	p.set('seconds', state.seconds);
	if (state.pid)
		p.set('pid', state.pid);
	if (state.q)
		p.set('q', state.q);
	if (state.probe)
		p.set('probe', state.probe);
	if (state.start) {
		p.set('start', state.start);
		p.set('end', state.end);
	}
	if (state.cmp)
		p.set('cmp', state.cmp);
	if (state.fn)
		p.set('fn', state.fn);
	if (state.src)
		p.set('src', state.src);
	if (state.where)
		p.set('where', state.where);
	if (state.span !== DEFAULTS.span)
		p.set('span', state.span);
	if (!state.live)
		p.set('live', '0');
	if (!state.topdown)
		p.set('topdown', '0');
	history.replaceState(null, '', '#' + p);
}

// Formatting ------------------------------------------------------------------------------------

function fmtNs(ns) {
	const units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs']];
	for (const [div, unit] of units)
		if (ns >= div)
			return `${+(ns / div).toPrecision(3)} ${unit}`;
	return `${Math.round(ns)} ns`;
}

function fmtBytes(b) {
	const units = [[2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB']];
	for (const [div, unit] of units)
		if (b >= div)
			return `${+(b / div).toPrecision(3)} ${unit}`;
	return `${Math.round(b)} B`;
}

function fmtValue(v, unit) {
	if (unit === 'nanoseconds')
		return fmtNs(v);
	if (unit === 'bytes')
		return fmtBytes(v);
	return `${Math.round(v)} ${Math.round(v) === 1 ? 'sample' : 'samples'}`;
}

const pct = (part, whole) => (whole ? ((100 * part) / whole).toFixed(1) : '0.0') + '%';

// Folded stacks -> tree -------------------------------------------------------------------------

// "exe;root;...;leaf COUNT" lines -> { name, value (inclusive), children } with a root "all".
const parseFolded = (text) => stackTree(parseStacks(text), 'all');

// Slow calls' tree with each frame's self delta against the fast calls, the fast calls scaled
// to the slow calls' total: positive where slow calls spend a larger share of their time.
function diffTrees(slow, fast) {
	const scale = fast.value ? slow.value / fast.value : 0;
	const self = (n) => n.value - n.children.reduce((s, c) => s + c.value, 0);
	const walk = (s, f) => {
		const fk = new Map((f ? f.children : []).map((c) => [c.name, c]));
		s.fastValue = f ? f.value * scale : 0;
		s.delta = self(s) - (f ? self(f) * scale : 0);
		for (const c of s.children)
			walk(c, fk.get(c.name));
	};
	walk(slow, fast);
	return slow;
}

// Flame graphs ----------------------------------------------------------------------------------

class Flame {
	constructor(el, details, { diff = false, base = 'fast calls', onSelect = null } = {}) {
		this.el = el;
		this.onSelect = onSelect;
		this.details = details;
		this.diff = diff;
		this.base = base;
		this.zoomed = false;
		this.renders = 0;
		this.last = null;
	}

	render(root, unit, term) {
		this.last = { root, unit };
		this.zoomed = false;
		this.el.replaceChildren();
		this.tipEl?.remove();
		this.tipEl = null;
		this.el.dataset.total = root.value;
		if (!root.value) {
			const p = document.createElement('p');
			p.className = 'empty';
			p.textContent = 'No samples in this window.';
			this.el.append(p);
			this.el.dataset.renders = ++this.renders;
			return;
		}
		const total = root.value;
		const label = (d) => {
			let s = `${d.data.name}: ${fmtValue(d.value, unit)} (${pct(d.value, total)})`;
			if (this.diff)
				s += `, ${this.base} scaled: ${fmtValue(d.data.fastValue || 0, unit)}`;
			return s;
		};
		const tip = tooltip.defaultFlamegraphTooltip().text(label);
		const chart = flamegraph()
			.width(Math.max(this.el.clientWidth, 300))
			.cellHeight(18)
			.minFrameSize(1)
			.transitionDuration(250)
			.sort(true)
			// Root on top by default: deep stacks then grow away from the controls.
			.inverted(state.topdown)
			.tooltip(tip)
			.label(label)
			.setDetailsElement(this.details)
			.setSearchMatch((d, t) => !!t && d.data.name.toLowerCase().includes(t.toLowerCase()))
			.setSearchHandler((results, sum, all) => {
				this.details.textContent = results.length ?
					`search: ${results.length} frames, ${fmtValue(sum, unit)} of ` +
					`${fmtValue(all, unit)} (${pct(sum, all)})` : '\u00a0';
			})
			.onClick((d) => {
				this.zoomed = d.depth > 0;
				if (this.onSelect)
					this.onSelect(d.depth > 0 ? d.data.name : '');
			});
		if (this.diff)
			chart.computeDelta(true).setColorMapper(colorMapper.differentialColorMapper);
		this.chart = chart;
		select(this.el).datum(root).call(chart);
		// Each chart appends its own tooltip to <body>: keep only the current chart's.
		const tipEl = document.body.lastElementChild;
		if (tipEl && tipEl.classList.contains('d3-flame-graph-tip'))
			this.tipEl = tipEl;
		if (term)
			chart.search(term);
		this.el.dataset.renders = ++this.renders;
	}

	search(term) {
		if (!this.chart)
			return;
		if (term)
			this.chart.search(term);
		else
			this.chart.clear();
	}

	resetZoom() {
		this.zoomed = false;
		if (this.chart)
			this.chart.resetZoom();
	}

	redraw(term) {
		if (this.last)
			this.render(this.last.root, this.last.unit, term);
	}
}

const flame = new Flame($('flame'), $('details'), { onSelect: (name) => drill.select(name) });
const diff = new Flame($('diff'), $('diff-details'), { diff: true });
const cmp = new Flame($('cmp'), $('cmp-details'), { diff: true, base: 'base range' });
const callers = new Flame($('callers'), $('callers-details'));
const callees = new Flame($('callees'), $('callees-details'));
const functions = new FunctionTable($('functions'), $('fn-filter'), (name) => {
	state.fn = name;
	writeHash();
	showSandwich();
});
const timeline = new Timeline($('timeline'), $('timeline-legend'), (start, end) => {
	state.start = start;
	state.end = end;
	writeHash();
	refresh({ force: true });
});
let stacks = [];
const drill = new Drill({ $, state, getJSON, fetchOk, writeHash, viewQuery, fmtValue, fmtNs, pct,
	profile: () => profile(),
	loadProbes: () => loadProbes() });

// Profile panel ---------------------------------------------------------------------------------

const profile = () => profiles.find((p) => p.name === state.type) || profiles[0];

function setStatus(text, error = false) {
	$('status').textContent = text;
	$('status').classList.toggle('error', error);
}

async function loadProfiles() {
	const res = await getJSON('/api/v1/profiles');
	profiles = res.profiles;
	// Windows beyond the retention would be refused: offer the retention itself instead.
	const win = $('seconds');
	for (const o of [...win.options])
		if (Number(o.value) > res.retention_s)
			o.remove();
	if (![...win.options].some((o) => Number(o.value) === res.retention_s))
		win.append(new Option(`last ${res.retention_s} s (all kept)`, res.retention_s));
	if (state.seconds > res.retention_s)
		state.seconds = res.retention_s;
	if (![...win.options].some((o) => Number(o.value) === state.seconds))
		win.append(new Option(`last ${state.seconds} s`, state.seconds));
	win.value = String(state.seconds);
	const sel = $('type');
	sel.replaceChildren(...profiles.map((p) => {
		const o = new Option(p.available ? p.name : `${p.name} (not collected)`, p.name);
		o.title = p.help;
		o.disabled = !p.available;
		return o;
	}));
	if (!profiles.some((p) => p.name === state.type && p.available))
		state.type = (profiles.find((p) => p.available) || profiles[0]).name;
	sel.value = state.type;
}

async function loadProcesses(force) {
	const q = new URLSearchParams({ type: state.type });
	if (state.start) {
		q.set('start', state.start);
		q.set('end', state.end);
	} else if (profile().windowed) {
		q.set('seconds', state.seconds);
	}
	const sel = $('process');
	// A live update rebuilding the list under an open drop-down would close it: not while the
	// list has the focus.
	if (!force && document.activeElement === sel && sel.options.length > 1)
		return;
	const res = await getJSON('/api/v1/processes?' + q);
	const opts = [new Option('all processes', '')];
	let found = false;
	for (const p of res.processes) {
		const name = p.comm && p.comm !== p.exe ? `${p.exe} (${p.comm})` : p.exe || p.comm;
		opts.push(new Option(`${name} · pid ${p.pid} · ${fmtValue(p.value, res.unit)}`, p.pid));
		found ||= String(p.pid) === state.pid;
	}
	if (state.pid && !found)
		opts.push(new Option(`pid ${state.pid} (no samples in this window)`, state.pid));
	sel.replaceChildren(...opts);
	sel.value = state.pid;
}

const clock = (t) => new Date(t * 1000).toLocaleTimeString();

// The query of the view: its range, else its window (or none for a live set).
function viewQuery(p, start = state.start, end = state.end) {
	const q = new URLSearchParams({ format: 'folded' });
	if (start) {
		q.set('start', start);
		q.set('end', end);
	} else if (p.windowed) {
		q.set('seconds', state.seconds);
	}
	if (state.pid)
		q.set('pid', state.pid);
	return q;
}

async function loadFlame() {
	const p = profile();
	const q = viewQuery(p);
	const text = await getText(`${p.path}?${q}`);
	const root = parseFolded(text);
	stacks = parseStacks(text);
	flame.render(root, p.unit, state.q);
	functions.show(stacks, (v) => fmtValue(v, p.unit));
	q.delete('format');
	$('download').href = `${p.path}?${q}`;
	const what = state.pid ? `pid ${state.pid}` : 'all processes';
	document.title = `autoprof · ${p.name} · ${what}`;
	const when = state.start ? `from ${clock(state.start)} to ${clock(state.end)}` :
		p.windowed ? `the last ${state.seconds} s` : 'now (live allocations)';
	setStatus(`${p.name}: ${fmtValue(root.value, p.unit)} in ${what}, ${when} · updated ` +
		new Date().toLocaleTimeString());
	showSandwich();
	await drill.showSource();
	await loadCompare(text);
}

async function loadTimeline() {
	const p = profile();
	const now = Math.floor(Date.now() / 1000);
	const q = new URLSearchParams({ type: p.name, start: now - state.span, end: now });
	if (state.pid)
		q.set('pid', state.pid);
	await timeline.load('/api/v1/timeline?' + q);
	timeline.showRange(state.start ? [state.start, state.end] : null);
	$('range-info').textContent = state.start ?
		`showing ${clock(state.start)} to ${clock(state.end)}` :
		'drag over the timeline to show a range';
	$('range-clear').hidden = !state.start;
	$('compare-label').hidden = !state.start;
	$('compare').value = state.cmp;
}

// The range against an earlier one of the same length: widths are the range's, colours the
// change of each frame's share.
async function loadCompare(text) {
	$('compare-panel').hidden = !(state.start && state.cmp);
	if (!state.start || !state.cmp)
		return;
	const p = profile();
	const shift = CMP_SHIFT[state.cmp](state.start, state.end);
	const q = viewQuery(p, state.start - shift, state.end - shift);
	const base = parseFolded(await getText(`${p.path}?${q}`));
	$('compare-title').textContent = `${clock(state.start)}–${clock(state.end)} against ` +
		`${clock(state.start - shift)}–${clock(state.end - shift)}`;
	cmp.render(diffTrees(parseFolded(text), base), p.unit, state.q);
}

function showSandwich() {
	$('sandwich-panel').hidden = !state.fn;
	if (!state.fn)
		return;
	const p = profile();
	const { callers: up, callees: down } = sandwich(stacks, state.fn);
	$('sandwich-name').textContent = state.fn;
	callers.render(up, p.unit, '');
	callees.render(down, p.unit, '');
}

// Probe panel -----------------------------------------------------------------------------------

async function loadProbes() {
	const r = await fetch('/api/v1/probes', { cache: 'no-store' });
	probesPresent = r.status !== 404;
	$('probe-panel').hidden = !probesPresent;
	if (!probesPresent)
		return;
	if (!r.ok)
		throw new HttpError(r.status, await r.text());
	const { probes } = await r.json();
	probeList = probes;
	drill.renderProbeList(probes);
	const sel = $('probe');
	sel.replaceChildren(...probes.map((p) => {
		const where = p.function || p.location || '';
		return new Option(`${p.name || where} · ${p.binary} · ${p.calls} calls`, p.id);
	}));
	if (!probes.some((p) => String(p.id) === state.probe))
		state.probe = probes.length ? String(probes[0].id) : '';
	sel.value = state.probe;
	if (!state.probe) {
		$('probe-summary').textContent = 'No probes yet: add one below.';
		$('histogram').replaceChildren();
		diff.el.replaceChildren();
		return;
	}
	await loadProbe();
}

async function loadProbe() {
	const id = state.probe;
	const p = probeList.find((x) => String(x.id) === id);
	const caps = (p && p.capture) || [];
	const by = drill.groupControls(caps);
	// A value picked in the groups table narrows the split to those calls.
	if (state.where && !caps.some((c) => state.where.startsWith(`${c.name}=`)))
		state.where = '';
	const q = new URLSearchParams({ seconds: state.seconds });
	if (by)
		q.set('group_by', by);
	const lat = await getJSON(`/api/v1/probes/${id}/latency?${q}`);
	drill.renderGroups(lat.groups || null, by);
	drawHistogram($('histogram'), lat);
	$('probe-summary').textContent = `${lat.count} calls in the last ${lat.seconds} s · p50 ` +
		`${fmtNs(lat.p50_ns)} · p95 ${fmtNs(lat.p95_ns)} · p99 ${fmtNs(lat.p99_ns)} · slow above ` +
		fmtNs(lat.threshold_ns);
	const where = state.where ? `&where=${encodeURIComponent(state.where)}` : '';
	$('diff-where').textContent = state.where ? `calls with ${state.where} only` : '';
	const folded = (kind) => getText(`/debug/pprof/profile?probe=${id}&latency=${kind}` +
		`&seconds=${state.seconds}&format=folded${where}`);
	const [slow, fast] = await Promise.all([folded('slow'), folded('fast')]);
	diff.render(diffTrees(parseFolded(slow), parseFolded(fast)), 'count', state.q);
}

function svg(parent, tag, attrs, text) {
	const e = document.createElementNS(SVG_NS, tag);
	for (const [k, v] of Object.entries(attrs))
		e.setAttribute(k, v);
	if (text !== undefined)
		e.textContent = text;
	parent.append(e);
	return e;
}

// Buckets (non-empty, ascending, not cumulative) as equal-width bars labelled with their upper
// bounds; percentiles and the slow threshold are marked inside the bucket they fall in.
function drawHistogram(el, lat) {
	el.replaceChildren();
	const buckets = lat.buckets || [];
	const W = el.clientWidth || 900;
	const H = Number(el.getAttribute('height')) || 240;
	const m = { l: 56, r: 16, t: 44, b: 36 };
	const plotW = W - m.l - m.r;
	const plotH = H - m.t - m.b;
	svg(el, 'line', { class: 'axis', x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b });
	if (!buckets.length) {
		svg(el, 'text', { x: m.l, y: m.t + 20 }, 'No calls in this window.');
		return;
	}
	const max = Math.max(...buckets.map((b) => b.count), 1);
	const bw = plotW / buckets.length;
	const every = Math.ceil(buckets.length / Math.max(1, Math.floor(plotW / 70)));
	buckets.forEach((b, i) => {
		const h = (plotH * b.count) / max;
		const bar = svg(el, 'rect', {
			class: 'bar', x: m.l + i * bw + 1, y: H - m.b - h,
			width: Math.max(1, bw - 2), height: h,
		});
		svg(bar, 'title', {}, `≤ ${fmtNs(b.le_ns)}: ${b.count} calls`);
		if (i % every === 0)
			svg(el, 'text', { x: m.l + (i + 0.5) * bw, y: H - m.b + 14, 'text-anchor': 'middle' },
				`≤${fmtNs(b.le_ns)}`);
	});
	svg(el, 'text', { x: m.l - 6, y: m.t + 4, 'text-anchor': 'end' }, String(max));
	svg(el, 'text', { x: m.l - 6, y: H - m.b, 'text-anchor': 'end' }, '0');
	svg(el, 'text', { x: m.l + plotW / 2, y: H - 4, 'text-anchor': 'middle' }, 'call latency');
	const xOf = (ns) => {
		const i = buckets.findIndex((b) => b.le_ns >= ns);
		if (i < 0)
			return m.l + plotW;
		const lo = i ? buckets[i - 1].le_ns : 0;
		const frac = buckets[i].le_ns > lo ? (ns - lo) / (buckets[i].le_ns - lo) : 1;
		return m.l + (i + Math.min(1, Math.max(0, frac))) * bw;
	};
	const marks = [['p50', lat.p50_ns, 'marker'], ['p95', lat.p95_ns, 'marker'],
		['p99', lat.p99_ns, 'marker'], ['slow', lat.threshold_ns, 'threshold']];
	// Labels close to the one before go a row lower, so they never overlap.
	let lastX = -Infinity;
	let row = 0;
	marks.filter(([, ns]) => ns > 0)
		.map(([name, ns, cls]) => [name, ns, cls, xOf(ns)])
		.sort((a, b) => a[3] - b[3])
		.forEach(([name, ns, cls, x]) => {
			row = x - lastX < 80 ? (row + 1) % 3 : 0;
			lastX = x;
			svg(el, 'line', { class: cls, 'data-mark': name, x1: x, x2: x,
				y1: m.t - 30 + row * 11, y2: H - m.b });
			svg(el, 'text', { class: `${cls}-label`, x: x + 3, y: m.t - 22 + row * 11 },
				`${name} ${fmtNs(ns)}`);
		});
}

async function addProbe(ev) {
	ev.preventDefault();
	const body = { binary: $('probe-binary').value, function: $('probe-function').value };
	const capture = $('probe-capture').value.split(',').map((c) => c.trim()).filter((c) => c);
	if (capture.length)
		body.capture = capture;
	try {
		const r = await fetchOk('/api/v1/probes', {
			method: 'POST', headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify(body),
		});
		state.probe = String((await r.json()).id);
		$('probe-add-status').textContent = `probe ${state.probe} added`;
		writeHash();
		await loadProbes();
	} catch (e) {
		$('probe-add-status').textContent = e.message;
	}
}

// Refresh ---------------------------------------------------------------------------------------

// One refresh at a time (a change made meanwhile runs right after it); a zoomed graph is left
// alone so a live update does not undo the zoom.
async function refresh({ force = false } = {}) {
	if (busy) {
		queued = queued || { force: false };
		queued.force ||= force;
		return;
	}
	busy = true;
	document.body.dataset.refreshing = '1';
	try {
		await loadProcesses(force);
		await loadTimeline();
		// A range does not change: drawn again only when asked to.
		if (force || (!flame.zoomed && !state.start))
			await loadFlame();
		else if (flame.zoomed)
			setStatus('zoomed: live updates paused (reset zoom to resume)');
	} catch (e) {
		setStatus(e.message, true);
	}
	try {
		if (force || !diff.zoomed)
			await loadProbes();
	} catch (e) {
		$('probe-summary').textContent = e.message;
	} finally {
		busy = false;
	}
	if (queued) {
		const again = queued;
		queued = null;
		await refresh(again);
	}
	delete document.body.dataset.refreshing;
}

function bind() {
	$('type').addEventListener('change', (e) => {
		state.type = e.target.value;
		writeHash();
		refresh({ force: true });
	});
	$('process').addEventListener('change', (e) => {
		state.pid = e.target.value;
		writeHash();
		refresh({ force: true });
	});
	$('seconds').addEventListener('change', (e) => {
		state.seconds = Number(e.target.value);
		writeHash();
		refresh({ force: true });
	});
	$('live').addEventListener('change', (e) => {
		state.live = e.target.checked;
		writeHash();
	});
	$('topdown').addEventListener('change', (e) => {
		state.topdown = e.target.checked;
		writeHash();
		for (const f of [flame, diff, cmp, callers, callees])
			f.redraw(f === flame || f === diff || f === cmp ? state.q : '');
	});
	$('search').addEventListener('input', (e) => {
		state.q = e.target.value.trim();
		writeHash();
		flame.search(state.q);
		diff.search(state.q);
		cmp.search(state.q);
	});
	$('reset').addEventListener('click', () => {
		flame.resetZoom();
		diff.resetZoom();
	});
	$('span').addEventListener('change', (e) => {
		state.span = Number(e.target.value);
		writeHash();
		refresh({ force: true });
	});
	$('range-clear').addEventListener('click', () => {
		state.start = state.end = 0;
		state.cmp = '';
		writeHash();
		refresh({ force: true });
	});
	$('compare').addEventListener('change', (e) => {
		state.cmp = e.target.value;
		writeHash();
		refresh({ force: true });
	});
	$('sandwich-close').addEventListener('click', () => {
		state.fn = '';
		writeHash();
		showSandwich();
	});
	$('probe').addEventListener('change', (e) => {
		state.probe = e.target.value;
		writeHash();
		refresh({ force: true });
	});
	$('probe-add').addEventListener('submit', addProbe);
	let resizeTimer;
	window.addEventListener('resize', () => {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(() => {
			flame.redraw(state.q);
			diff.redraw(state.q);
			timeline.draw();
		}, 200);
	});
	setInterval(() => {
		if (state.live && !document.hidden)
			refresh();
	}, REFRESH_MS);
	// A fragment edited or a view link followed in this tab: that view, at once. (The page's
	// own writes use replaceState, which fires no hashchange.)
	window.addEventListener('hashchange', async () => {
		try {
			await showHash();
		} catch (e) {
			setStatus(e.message, true);
			return;
		}
		writeHash();
		await refresh({ force: true });
	});
}

// The controls set to the view the fragment names.
async function showHash() {
	readHash();
	$('search').value = state.q;
	$('live').checked = state.live;
	$('topdown').checked = state.topdown;
	if (![...$('span').options].some((o) => Number(o.value) === state.span))
		$('span').append(new Option(`last ${state.span} s`, state.span));
	$('span').value = String(state.span);
	await loadProfiles();
}

// Controls that change state are shown only when the server would accept them. A server
// without /api/v1/status predates the switch: its form stays, and it answers for itself.
async function loadStatus() {
	let admin = true;
	try {
		admin = (await getJSON('/api/v1/status')).admin_api !== false;
	} catch (e) {
		admin = true;
	}
	$('probe-add').hidden = !admin;
	$('admin-off').hidden = admin;
	drill.setAdmin(admin);
}

async function main() {
	try {
		await loadStatus();
		await showHash();
	} catch (e) {
		setStatus(e.message, true);
		return;
	}
	bind();
	writeHash();
	await refresh({ force: true });
}

main();
