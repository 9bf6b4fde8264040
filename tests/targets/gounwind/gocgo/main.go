// SPDX-License-Identifier: GPL-2.0-only

// cgo both ways: main.main -> main.goCallsC -> C c_hot -> c_leaf (Go calling C), and
// main.main -> main.goViaC -> C c_calls_go -> main.goBack -> main.spin (C calling Go back).
// The C is built -O2 without frame pointers: only .eh_frame walks it.
package main

// #cgo CFLAGS: -O2 -fomit-frame-pointer
// unsigned long c_hot(unsigned long n);
// unsigned long c_calls_go(unsigned long n);
import "C"

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

//export goBack
func goBack(n C.ulong) C.ulong {
	return C.ulong(spin(uint64(n)))
}

//go:noinline
func goCallsC() {
	sink += uint64(C.c_hot(2000000))
}

//go:noinline
func goViaC() {
	sink += uint64(C.c_calls_go(2000000))
}

func main() {
	secs := 30
	if len(os.Args) > 1 {
		secs, _ = strconv.Atoi(os.Args[1])
	}
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for time.Now().Before(end) {
		goCallsC()
		goViaC()
	}
}
