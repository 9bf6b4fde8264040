// SPDX-License-Identifier: GPL-2.0-only
// The function table beside the flame graph and the sandwich view of one function, both from
// the same folded stacks the flame graph is drawn from.

// Folded text -> [{ frames: [root ... leaf], count }].
export function parseStacks(text) {
	const out = [];
	for (const line of text.split('\n')) {
		const sp = line.lastIndexOf(' ');
		if (sp <= 0)
			continue;
		const count = Number(line.slice(sp + 1));
		if (count > 0)
			out.push({ frames: line.slice(0, sp).split(';'), count });
	}
	return out;
}

// Self (the stacks' leaf) and total (anywhere in the stack, once per stack however often it
// recurses) per function; the first frame is the process's executable, not a function.
export function functionTotals(stacks) {
	const by = new Map();
	const row = (name) => {
		let r = by.get(name);
		if (!r) {
			r = { name, self: 0, total: 0 };
			by.set(name, r);
		}
		return r;
	};
	for (const { frames, count } of stacks) {
		const seen = new Set();
		for (let i = 1; i < frames.length; i++) {
			if (seen.has(frames[i]))
				continue;
			seen.add(frames[i]);
			row(frames[i]).total += count;
		}
		if (frames.length > 1)
			row(frames[frames.length - 1]).self += count;
	}
	return [...by.values()];
}

// Stacks -> { name, value (inclusive), children } under a root of that name.
export function stackTree(stacks, rootName) {
	const root = { name: rootName, value: 0, kids: new Map() };
	for (const { frames, count } of stacks) {
		let node = root;
		root.value += count;
		for (const name of frames) {
			let child = node.kids.get(name);
			if (!child) {
				child = { name, value: 0, kids: new Map() };
				node.kids.set(name, child);
			}
			child.value += count;
			node = child;
		}
	}
	const finish = (n) => {
		n.children = [...n.kids.values()].map(finish);
		delete n.kids;
		return n;
	};
	return finish(root);
}

// The function itself is the root of both halves of a sandwich.
const tree = (paths) => stackTree(paths, '').children[0] || { name: '', value: 0, children: [] };

// Callers of fn (fn at the root, its callers below it, outermost last) and its callees (fn at
// the root, what it called below), from every stack through fn, cut at its outermost call.
export function sandwich(stacks, fn) {
	const callers = [];
	const callees = [];
	for (const { frames, count } of stacks) {
		const at = frames.indexOf(fn, 1);
		if (at < 1)
			continue;
		callers.push({ frames: frames.slice(0, at + 1).reverse(), count });
		callees.push({ frames: frames.slice(at), count });
	}
	return { callers: tree(callers), callees: tree(callees) };
}

// The table: rows sorted by a column, filtered by a substring; a click on a row calls pick.
export class FunctionTable {
	constructor(table, filter, pick) {
		this.table = table;
		this.filter = filter;
		this.pick = pick;
		this.sort = 'self';
		this.rows = [];
		this.total = 0;
		this.fmt = (v) => String(v);
		for (const th of table.querySelectorAll('th[data-sort]'))
			th.addEventListener('click', () => {
				this.sort = th.dataset.sort;
				this.draw();
			});
		filter.addEventListener('input', () => this.draw());
	}

	show(stacks, fmt) {
		this.rows = functionTotals(stacks);
		this.total = stacks.reduce((s, x) => s + x.count, 0);
		this.fmt = fmt;
		this.draw();
	}

	draw() {
		const term = this.filter.value.trim().toLowerCase();
		const key = this.sort;
		const rows = this.rows.filter((r) => !term || r.name.toLowerCase().includes(term));
		rows.sort((a, b) => key === 'name' ? a.name.localeCompare(b.name) :
			b[key] - a[key] || a.name.localeCompare(b.name));
		const pct = (v) => (this.total ? ((100 * v) / this.total).toFixed(1) : '0.0') + '%';
		const body = this.table.tBodies[0];
		// The first 200: a long tail of one-sample functions is what the filter is for.
		body.replaceChildren(...rows.slice(0, 200).map((r) => {
			const tr = document.createElement('tr');
			tr.dataset.name = r.name;
			tr.dataset.self = r.self;
			tr.dataset.total = r.total;
			const cells = [r.name, `${this.fmt(r.self)} · ${pct(r.self)}`,
				`${this.fmt(r.total)} · ${pct(r.total)}`];
			for (const text of cells) {
				const td = document.createElement('td');
				td.textContent = text;
				tr.append(td);
			}
			tr.title = 'sandwich view: its callers and callees';
			tr.addEventListener('click', () => this.pick(r.name));
			return tr;
		}));
		for (const th of this.table.querySelectorAll('th[data-sort]'))
			th.classList.toggle('sorted', th.dataset.sort === key);
		this.table.dataset.rows = rows.length;
	}
}
