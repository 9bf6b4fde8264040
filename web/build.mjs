// SPDX-License-Identifier: GPL-2.0-only
// Bundles the web view into one self-contained HTML page (scripts and styles inlined), which
// the Makefile links into autoprof: the binary serves it with no files and no network.
//   node build.mjs OUT.html
import { readFile, writeFile } from 'node:fs/promises';
import * as esbuild from 'esbuild';

const out = process.argv[2];
if (!out) {
	console.error('usage: node build.mjs OUT.html');
	process.exit(2);
}

// app.js imports the styles (its own and d3-flame-graph's): one build yields app.js and app.css.
const res = await esbuild.build({
	entryPoints: ['src/app.js'],
	bundle: true,
	minify: true,
	format: 'iife',
	target: 'es2020',
	// Keep the bundled packages' license headers, collected at the end.
	legalComments: 'eof',
	outdir: 'out', // names the outputs; nothing is written
	write: false,
	logLevel: 'warning',
});
const output = (ext) => res.outputFiles.find((f) => f.path.endsWith(ext)).text;

// A literal "</script" inside the script would end the element early.
const script = output('.js').replaceAll('</script', '<\\/script');
const style = output('.css').replaceAll('</style', '<\\/style');
const template = await readFile('src/index.html', 'utf8');
const page = template
	.replace('<!-- STYLE -->', () => `<style>${style}</style>`)
	.replace('<!-- SCRIPT -->', () => `<script>${script}</script>`);
if (page === template)
	throw new Error('src/index.html lacks the STYLE and SCRIPT markers');
await writeFile(out, page);
