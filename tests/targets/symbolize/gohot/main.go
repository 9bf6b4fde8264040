// SPDX-License-Identifier: GPL-2.0-only

// Spins in main.hotLoop for SECONDS (default 2): the profile must name it, stripped or not.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

// Never called, but it makes hotLoop a non-leaf, and only those get a frame pointer (a
// frameless leaf would hide main.main from a frame-pointer walk).
//
//go:noinline
func never(x uint64) uint64 { return x + 1 }

//go:noinline
func hotLoop(x uint64) uint64 { // HOT_START
	for i := uint64(0); i < 1000000; i++ {
		x = x*6364136223846793005 + (i | 1)
	}
	if x == 42 {
		x = never(x)
	}
	return x
} // HOT_END

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	fmt.Println(os.Getpid())
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		sink = hotLoop(sink)
	}
}
