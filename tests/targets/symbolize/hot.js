// SPDX-License-Identifier: GPL-2.0-only
// Run with node --perf-basic-prof: spins in autoprofHotLoop (JIT code named only by the perf
// map /tmp/perf-PID.map) for SECONDS (argv[2], default 3).
'use strict';
const secs = Number(process.argv[2] || 3);

function autoprofHotLoop(x) {
  for (let i = 0; i < 1000000; i++) x = (Math.imul(x, 1103515245) + i) | 0;
  return x;
}

console.log(process.pid);
const end = Date.now() + secs * 1000;
let x = 1;
while (Date.now() < end) x = autoprofHotLoop(x);
if (x === 42) console.log(x);
