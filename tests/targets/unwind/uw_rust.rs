// SPDX-License-Identifier: GPL-2.0-only
// main → rs_a → rs_b → rs_leaf, built -C force-frame-pointers=no: the chain exists only in
// .eh_frame. black_box after each call keeps it a call (no tail call) and keeps the callee
// out of line together with #[inline(never)].
//   uw_rust SECONDS
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

#[inline(never)]
fn rs_leaf(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..1_000_000u32 {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407)); // HOT
    }
    x
}

#[inline(never)]
fn rs_b(a: u64) -> u64 {
    let buf = black_box([a, a ^ 0x55, a + 11, a * 7]);
    let r = black_box(rs_leaf(a));
    r.wrapping_add(buf[(r & 3) as usize])
}

#[inline(never)]
fn rs_a(a: u64) -> u64 {
    let buf = black_box([a * 3, a >> 3]);
    let r = black_box(rs_b(a));
    r ^ buf[(r & 1) as usize]
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let mut out = std::io::stdout();
    writeln!(out, "{}", std::process::id()).unwrap();
    out.flush().unwrap();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut x = std::process::id() as u64;
    while Instant::now() < end {
        x = black_box(rs_a(x));
    }
    black_box(x);
}
