// SPDX-License-Identifier: GPL-2.0-only
//! Spins in rustspin::hot, never inlined, for SECONDS (default 2): the profile must name it
//! rustspin::hot under both manglings, without the legacy hash.
use std::time::{Duration, Instant};

#[inline(never)]
fn hot(mut x: u64) -> u64 { // HOT_START
    for i in 0..1_000_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i | 1);
    }
    std::hint::black_box(x)
} // HOT_END

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    println!("{}", std::process::id());
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut x = 1u64;
    while Instant::now() < end {
        x = hot(std::hint::black_box(x));
    }
    std::hint::black_box(x);
}
