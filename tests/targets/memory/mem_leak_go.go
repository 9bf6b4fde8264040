// SPDX-License-Identifier: GPL-2.0-only

// Memory profiling target in Go, the counterpart of tests/targets/common/mem_leak.c: leak64k keeps
// 2 x 64 KiB every 10 ms, churn allocates and drops 200 256-byte slices every 10 ms. Samples at
// runtime.MemProfileRate = 64 KiB (set first thing in main, as a program would), so that the
// runtime's own sampling gives enough samples for a few percent. Prints its pid and waits for
// a line on stdin (so that the test starts it once autoprof attached: allocations before that
// are invisible, and a Go program allocates at once); after SECONDS it collects twice (the sweeper frees churn's sampled objects) and prints its true leaked total
// ("leaked N"), then lives LINGER more seconds.
//
//	mem_leak_go SECONDS [LINGER]
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

var kept [][]byte
var sink []byte
var leaked int

//go:noinline
func leak64k() {
	for i := 0; i < 2; i++ {
		b := make([]byte, 64*1024)
		b[0] = 1
		kept = append(kept, b)
		leaked += len(b)
	}
}

//go:noinline
func churn() {
	for i := 0; i < 200; i++ {
		b := make([]byte, 256)
		b[0] = byte(i)
		sink = b
	}
}

func main() {
	runtime.MemProfileRate = 64 * 1024
	secs, linger := 5.0, 0.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	if len(os.Args) > 2 {
		linger, _ = strconv.ParseFloat(os.Args[2], 64)
	}
	fmt.Println(os.Getpid())
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		os.Exit(1)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		leak64k()
		churn()
		time.Sleep(10 * time.Millisecond)
	}
	sink = nil
	runtime.GC()
	runtime.GC()
	fmt.Printf("leaked %d\n", leaked)
	time.Sleep(time.Duration(linger * float64(time.Second)))
	runtime.KeepAlive(kept)
}
