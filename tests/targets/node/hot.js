// SPDX-License-Identifier: GPL-2.0-only
// The JavaScript workload of tests/integration/test_node.py: hotFn and coldFn do the same loop
// 3 and 1 million times, so V8 optimizes both and their CPU time is 3:1. Prints its pid, then
// runs for SECONDS (its first argument).
function hotFn(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x += (i * 31) ^ (x >>> 3);
	return x;
}

function coldFn(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x += (i * 31) ^ (x >>> 3);
	return x;
}

console.log(process.pid);
let sink = 0;
const end = Date.now() + 1000 * Number(process.argv[2]);
while (Date.now() < end)
	sink += hotFn(3e6) + coldFn(1e6);
if (sink === 42)
	console.log(sink);
