// SPDX-License-Identifier: GPL-2.0-only

// main.main -> main.goHot -> main.spin, where spin is a leaf Go compiles without a frame (no
// BP push: a frame-pointer walk from it skips goHot), and main.main -> main.goWarm ->
// main.spinFramed, whose leaf has a frame, for contrast. A goroutine runs
// main.goWorker -> main.goHot -> main.spin too: its stack ends at runtime.goexit.
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func spin(n uint64) uint64 {
	x := n
	for i := uint64(0); i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// A frame of its own: the array escapes through the call below.
//
//go:noinline
func spinFramed(n uint64) uint64 {
	var buf [64]uint64
	for i := uint64(0); i < n; i++ {
		buf[i&63] += i
	}
	return keep(&buf)
}

//go:noinline
func keep(b *[64]uint64) uint64 { return b[3] }

//go:noinline
func goHot() {
	sink += spin(2000000)
}

//go:noinline
func goWarm() {
	sink += spinFramed(8000000)
}

//go:noinline
func goWorker() {
	for {
		goHot()
	}
}

func main() {
	secs := 30
	if len(os.Args) > 1 {
		secs, _ = strconv.Atoi(os.Args[1])
	}
	go goWorker()
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for time.Now().Before(end) {
		goHot()
		goWarm()
	}
}
