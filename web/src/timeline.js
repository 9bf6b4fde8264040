// SPDX-License-Identifier: GPL-2.0-only
// The timeline: a profile type's totals per step (/api/v1/timeline, from disk and memory), the
// top processes stacked in colour over the total in grey. Dragging over it picks a range (a
// click picks one step); the flame graph then shows that range.
const SVG_NS = 'http://www.w3.org/2000/svg';
const COLOURS = ['#0969da', '#bf3989', '#1a7f37', '#bc4c00', '#8250df'];
const AXIS = 16; // px under the bars for the time labels

function el(name, attrs, parent) {
	const e = document.createElementNS(SVG_NS, name);
	for (const [k, v] of Object.entries(attrs))
		e.setAttribute(k, v);
	parent.append(e);
	return e;
}

const hhmm = (t) => new Date(t * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

export class Timeline {
	constructor(svg, legend, onRange) {
		this.svg = svg;
		this.legend = legend;
		this.onRange = onRange;
		this.data = null;
		this.range = null; // [start, end] shown selected
		this.drag = null;
		svg.addEventListener('pointerdown', (e) => this.down(e));
		svg.addEventListener('pointermove', (e) => this.move(e));
		svg.addEventListener('pointerup', (e) => this.up(e));
	}

	async load(url) {
		const r = await fetch(url, { cache: 'no-store' });
		if (!r.ok)
			throw new Error(`timeline: HTTP ${r.status}: ${(await r.text()).trim()}`);
		this.data = await r.json();
		this.draw();
	}

	// Unix seconds at x px of the svg, on the steps' grid.
	timeAt(x) {
		const d = this.data;
		const w = this.svg.clientWidth || 1;
		const i = Math.min(d.times.length - 1, Math.max(0, Math.floor((x / w) * d.times.length)));
		return d.times[i];
	}

	xOf(t) {
		const d = this.data;
		return ((t - d.start) / Math.max(1, d.end - d.start)) * (this.svg.clientWidth || 1);
	}

	draw() {
		const d = this.data;
		const svg = this.svg;
		svg.replaceChildren();
		if (!d)
			return;
		const w = svg.clientWidth || 600;
		const h = (svg.clientHeight || 110) - AXIS;
		const n = d.times.length;
		const bw = w / Math.max(1, n);
		const max = Math.max(1, ...d.total);
		svg.dataset.type = d.type;
		svg.dataset.start = d.start;
		svg.dataset.end = d.end;
		svg.dataset.step = d.step;
		const bars = el('g', {}, svg);
		d.total.forEach((v, i) => {
			const bh = (v / max) * h;
			const r = el('rect', { class: 'tl-total', x: i * bw, y: h - bh, width: Math.max(1, bw - 0.5),
				height: bh }, bars);
			r.dataset.time = d.times[i];
			r.dataset.value = v;
		});
		const top = d.processes.slice(0, COLOURS.length);
		const base = new Array(n).fill(0);
		top.forEach((p, k) => {
			const g = el('g', { class: 'tl-process', fill: COLOURS[k] }, svg);
			g.dataset.pid = p.pid;
			p.values.forEach((v, i) => {
				if (!v)
					return;
				const bh = (v / max) * h;
				el('rect', { x: i * bw, y: h - base[i] - bh, width: Math.max(1, bw - 0.5), height: bh }, g);
				base[i] += bh;
			});
		});
		// Five time labels along the bottom.
		for (let k = 0; k <= 4; k++) {
			const t = d.start + ((d.end - d.start) * k) / 4;
			el('text', { x: Math.min(w - 40, (w * k) / 4), y: h + 12, class: 'tl-axis' }, svg).textContent = hhmm(t);
		}
		this.sel = el('rect', { class: 'tl-selection', x: 0, y: 0, width: 0, height: h }, svg);
		this.showRange(this.range);
		this.legend.replaceChildren(...top.map((p, k) => {
			const s = document.createElement('span');
			s.className = 'tl-key';
			s.style.setProperty('--c', COLOURS[k]);
			s.textContent = `${p.exe || '?'} (${p.pid})`;
			return s;
		}));
	}

	showRange(range) {
		this.range = range;
		if (!this.sel)
			return;
		if (!range || !this.data) {
			this.sel.setAttribute('width', 0);
			return;
		}
		const x0 = Math.max(0, this.xOf(range[0]));
		const x1 = Math.min(this.svg.clientWidth, this.xOf(range[1]));
		this.sel.setAttribute('x', x0);
		this.sel.setAttribute('width', Math.max(0, x1 - x0));
	}

	x(e) {
		return e.clientX - this.svg.getBoundingClientRect().left;
	}

	down(e) {
		if (!this.data || e.button !== 0)
			return;
		this.svg.setPointerCapture(e.pointerId);
		this.drag = this.x(e);
	}

	move(e) {
		if (this.drag === null)
			return;
		const a = Math.min(this.drag, this.x(e));
		const b = Math.max(this.drag, this.x(e));
		this.sel.setAttribute('x', a);
		this.sel.setAttribute('width', b - a);
	}

	up(e) {
		if (this.drag === null)
			return;
		const a = Math.min(this.drag, this.x(e));
		const b = Math.max(this.drag, this.x(e));
		this.drag = null;
		const start = this.timeAt(a);
		const end = Math.min(this.data.end, this.timeAt(b) + this.data.step);
		this.showRange([start, end]);
		this.onRange(start, end);
	}
}
