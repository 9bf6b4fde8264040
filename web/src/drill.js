// SPDX-License-Identifier: GPL-2.0-only
// Drill-down from the flame graph: a clicked frame offers "time this function" (a latency probe
// on it, in the binary the profile saw it in: /api/v1/source says which) and its source view
// (its lines with their share of samples, the source text where the server may read it, a line
// probe on each line); and the list of probes, each removable.

// The type whose windowed samples name a live set's functions (query.h: query__process_type).
const SOURCE_TYPE = { heap: 'allocs', gpuheap: 'gpuallocs' };

export class Drill {
	// ctx: $, state, getJSON, fetchOk, writeHash, viewQuery(profile), profile(), loadProbes(),
	// fmtValue(v, unit), pct(part, whole).
	constructor(ctx) {
		this.ctx = ctx;
		this.admin = true;
		this.selected = '';
		this.loc = null; // the source view's location (binary, file, symbol)
		const { $ } = ctx;
		$('time-fn').addEventListener('click', () => this.timeFunction(this.selected));
		$('show-source').addEventListener('click', () => {
			ctx.state.src = this.selected;
			ctx.writeHash();
			this.showSource();
		});
		$('source-close').addEventListener('click', () => {
			ctx.state.src = '';
			ctx.writeHash();
			this.showSource();
		});
		$('source-lines').addEventListener('click', (e) => {
			const b = e.target.closest('button[data-line]');
			if (b)
				this.probeLine(Number(b.dataset.line));
		});
		$('probe-groupby').addEventListener('change', () => ctx.loadProbes());
		$('probe-groups').addEventListener('click', (e) => {
			const tr = e.target.closest('tr.pick');
			if (!tr)
				return;
			const w = `${tr.dataset.by}=${tr.dataset.value}`;
			ctx.state.where = ctx.state.where === w ? '' : w;
			ctx.writeHash();
			ctx.loadProbes();
		});
		$('probe-list').addEventListener('click', (e) => {
			const b = e.target.closest('button[data-remove]');
			if (b)
				this.removeProbe(b.dataset.remove);
		});
	}

	setAdmin(admin) {
		this.admin = admin;
	}

	// A frame of the main flame graph was clicked (its name; the root "all" offers nothing).
	select(name) {
		const { $ } = this.ctx;
		this.selected = name || '';
		$('frame-actions').hidden = !this.selected;
		$('frame-name').textContent = this.selected;
		$('frame-status').textContent = '';
	}

	sourceQuery(name) {
		const p = this.ctx.profile();
		const q = this.ctx.viewQuery(p);
		q.delete('format');
		q.set('type', SOURCE_TYPE[p.name] || p.name);
		if (!q.has('seconds') && !q.has('start'))
			q.set('seconds', this.ctx.state.seconds);
		q.set('function', name);
		return '/api/v1/source?' + q;
	}

	async post(body) {
		const r = await this.ctx.fetchOk('/api/v1/probes', {
			method: 'POST', headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify(body),
		});
		return (await r.json()).id;
	}

	// The server's error for a probe request: its JSON {"error"} when it gave one.
	static reason(e) {
		try {
			return JSON.parse(e.message.replace(/^HTTP \d+: /, '')).error || e.message;
		} catch (_) {
			return e.message;
		}
	}

	async timeFunction(name) {
		const { $, state } = this.ctx;
		const say = (t) => { $('frame-status').textContent = t; };
		if (!this.admin) {
			say('Timing a function adds a probe, which changes what autoprof does: start ' +
				'autoprof with --web.enable-admin-api to allow it.');
			return;
		}
		try {
			const src = await this.ctx.getJSON(this.sourceQuery(name));
			const loc = src.locations.find((l) => !l.inlined && l.binary.startsWith('/') &&
				l.symbol);
			if (!loc) {
				say(`${name} has no symbol of its own to probe (inlined, or not native code)`);
				return;
			}
			const body = { binary: loc.binary, function: loc.symbol, name };
			const capture = $('time-capture').value.split(',').map((c) => c.trim())
				.filter((c) => c);
			if (capture.length)
				body.capture = capture;
			if (state.pid)
				body.pid = Number(state.pid);
			const id = await this.post(body);
			say(`probe ${id} on ${name} in ${loc.binary}`);
			state.probe = String(id);
			this.ctx.writeHash();
			await this.ctx.loadProbes();
			$('probe-panel').scrollIntoView();
		} catch (e) {
			say(Drill.reason(e));
		}
	}

	// The source view of state.src (hidden when none), drawn again at each refresh.
	async showSource() {
		const { $, state } = this.ctx;
		$('source-panel').hidden = !state.src;
		if (!state.src)
			return;
		$('source-name').textContent = state.src;
		$('source-inside-probe').textContent = state.probe ? `#${state.probe}` : '(none selected)';
		$('source-inside').disabled = !state.probe;
		$('source-inside-label').hidden = !this.admin;
		let src;
		try {
			src = await this.ctx.getJSON(this.sourceQuery(state.src));
		} catch (e) {
			this.loc = null;
			$('source-where').textContent = '';
			$('source-lines').tBodies[0].replaceChildren();
			$('source-error').textContent = e.status === 404 ?
				`No samples of ${state.src} in this window.` : e.message;
			return;
		}
		// The location most of its samples are in.
		const loc = src.locations[0];
		this.loc = loc;
		$('source-where').textContent = `${loc.file || 'no source file'} · ${loc.binary} · ` +
			`${this.ctx.fmtValue(loc.total, src.unit)} total ` +
			`(${this.ctx.pct(loc.total, src.profile_total)}), ` +
			`${this.ctx.fmtValue(loc.self, src.unit)} self` +
			(src.locations.length > 1 ? ` · also in ${src.locations.length - 1} other places` : '');
		$('source-error').textContent = loc.source_error || '';
		this.drawLines(loc, src);
	}

	drawLines(loc, src) {
		const { $ } = this.ctx;
		const byLine = new Map(loc.lines.map((l) => [l.line, l]));
		const rows = [];
		const maxTotal = Math.max(1, ...loc.lines.map((l) => l.total));
		const canProbe = this.admin && loc.file && loc.binary.startsWith('/');
		const row = (n, text) => {
			const s = byLine.get(n);
			const tr = document.createElement('tr');
			tr.dataset.line = n;
			if (s && s.total)
				tr.className = 'hot';
			const cell = (cls, content) => {
				const td = document.createElement('td');
				if (cls)
					td.className = cls;
				if (content instanceof Node)
					td.append(content);
				else
					td.textContent = content;
				tr.append(td);
				return td;
			};
			cell('num', String(n));
			cell('num self', s ? this.ctx.pct(s.self, src.profile_total) : '');
			const total = cell('num total', s ? this.ctx.pct(s.total, src.profile_total) : '');
			if (s) {
				const bar = document.createElement('span');
				bar.className = 'bar';
				bar.style.width = `${Math.round((60 * s.total) / maxTotal)}px`;
				total.prepend(bar, ' ');
			}
			const act = cell('', '');
			if (canProbe && n) {
				const b = document.createElement('button');
				b.type = 'button';
				b.dataset.line = n;
				b.textContent = 'probe';
				b.title = `a line probe at ${loc.file}:${n}`;
				act.append(b);
			}
			cell('code', text);
			return tr;
		};
		if (loc.source) {
			loc.source.lines.forEach((t, i) => rows.push(row(loc.source.first_line + i, t)));
		} else {
			for (const l of loc.lines)
				rows.push(row(l.line, ''));
		}
		$('source-lines').tBodies[0].replaceChildren(...rows);
	}

	async probeLine(line) {
		const { $, state } = this.ctx;
		const loc = this.loc;
		if (!loc)
			return;
		const body = { binary: loc.binary, location: `${loc.file}:${line}`,
			name: `${state.src}:${line}` };
		if (state.pid)
			body.pid = Number(state.pid);
		if ($('source-inside').checked && state.probe)
			body.inside = { probe: Number(state.probe), latency: 'slow' };
		try {
			const id = await this.post(body);
			$('source-status').textContent = `line probe ${id} at ${body.location}`;
			await this.ctx.loadProbes();
		} catch (e) {
			$('source-status').textContent = Drill.reason(e);
		}
	}

	async removeProbe(id) {
		const { state } = this.ctx;
		try {
			await this.ctx.fetchOk(`/api/v1/probes/${id}`, { method: 'DELETE' });
		} catch (e) {
			this.ctx.$('probe-add-status').textContent = Drill.reason(e);
		}
		if (state.probe === String(id))
			state.probe = '';
		this.ctx.writeHash();
		await this.ctx.loadProbes();
	}

	// The group-by choice for a probe capturing caps (hidden without): the chosen capture, or ''.
	groupControls(caps) {
		const { $ } = this.ctx;
		const sel = $('probe-groupby');
		const names = caps.map((c) => c.name);
		$('probe-groups-controls').hidden = !names.length;
		if (!names.length) {
			$('probe-groups').hidden = true;
			return '';
		}
		const keep = names.includes(sel.value) ? sel.value : names[0];
		if ([...sel.options].map((o) => o.value).join() !== names.join())
			sel.replaceChildren(...names.map((n) => new Option(n, n)));
		sel.value = keep;
		return keep;
	}

	// The calls of the window per captured value of `by` (latency?group_by=): a row of one
	// value (not a range) narrows the slow/fast split to its calls when clicked.
	renderGroups(groups, by) {
		const { $ } = this.ctx;
		const table = $('probe-groups');
		table.hidden = !groups;
		if (!groups)
			return;
		const ns = this.ctx.fmtNs;
		table.tBodies[0].replaceChildren(...groups.map((g) => {
			const tr = document.createElement('tr');
			tr.dataset.value = g.value;
			tr.dataset.by = by;
			if (/^(-?\d+|0x[0-9a-f]+)$/.test(g.value)) {
				tr.className = 'pick';
				tr.title = `only the calls with ${by}=${g.value} in the split below`;
			}
			if (this.ctx.state.where === `${by}=${g.value}`)
				tr.className += ' picked';
			for (const v of [g.value, g.count, ns(g.mean_ns), ns(g.p50_ns), ns(g.p95_ns),
				ns(g.p99_ns)]) {
				const td = document.createElement('td');
				td.textContent = String(v);
				tr.append(td);
			}
			return tr;
		}));
	}

	// The probe panel's list: each probe with what it counts and a remove button.
	renderProbeList(probes) {
		const { $ } = this.ctx;
		const rows = probes.map((p) => {
			const tr = document.createElement('tr');
			tr.dataset.probe = p.id;
			const inside = p.inside ? `${p.inside.latency} calls of #${p.inside.probe}` : '';
			const caps = (p.capture || []).map((c) => c.name).join(', ');
			for (const v of [p.id, p.name, p.function || p.location || '', p.binary,
				p.placement, p.calls, inside, caps]) {
				const td = document.createElement('td');
				td.textContent = String(v ?? '');
				tr.append(td);
			}
			const td = document.createElement('td');
			if (this.admin) {
				const b = document.createElement('button');
				b.type = 'button';
				b.dataset.remove = p.id;
				b.textContent = 'remove';
				td.append(b);
			}
			tr.append(td);
			return tr;
		});
		$('probe-list').tBodies[0].replaceChildren(...rows);
		$('probe-list').hidden = !probes.length;
	}
}
