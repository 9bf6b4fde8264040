// SPDX-License-Identifier: GPL-2.0-only
//! Memory profiling target in Rust, on the default global allocator (`__rust_alloc` passes each
//! allocation on to `__rdl_alloc`, which calls malloc): leak_64k keeps a 64 KiB Vec every 10 ms,
//! churn makes and drops 200 of 256 bytes. Like tests/targets/common/mem_leak.c: prints its pid,
//! with "wait" waits for a line on stdin, after SECONDS prints "leaked N" (the bytes kept), then
//! lives LINGER more seconds.
//!   mem_leak_rs SECONDS [LINGER [wait]]
use std::hint::black_box;
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

#[inline(never)]
fn leak_64k(kept: &mut Vec<Vec<u8>>) {
    kept.push(black_box(vec![1u8; 64 * 1024]));
}

#[inline(never)]
fn churn() {
    for i in 0..200 {
        drop(black_box(vec![i as u8; 256]));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, def: f64| args.get(i).map_or(def, |s| s.parse().unwrap_or(def));
    let (secs, linger) = (arg(1, 5.0), arg(2, 0.0));
    println!("{}", std::process::id());
    std::io::stdout().flush().unwrap();
    if args.get(3).map(String::as_str) == Some("wait") {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).unwrap();
    }
    let mut kept = Vec::new();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end {
        leak_64k(&mut kept);
        churn();
        std::thread::sleep(Duration::from_millis(10));
    }
    println!("leaked {}", kept.len() * 64 * 1024);
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs_f64(linger));
}
