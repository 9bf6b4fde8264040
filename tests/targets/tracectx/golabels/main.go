// SPDX-License-Identifier: GPL-2.0-only

// Go pprof labels as trace context: two goroutines (one locked to its thread with 3 labels, one
// free to move with 10) each run a new random trace/span every 200 ms inside pprof.Do with the
// labels trace_id and span_id, spinning in labelledSpin; one goroutine has no labels and spins
// in unlabelledSpin.
//
// Output on stdout: "PID <pid>", then one "SPAN <goroutine> <trace hex> <span hex>" per labelled
// span, written before the span starts. Runs argv[1] seconds (default 10) after a warm-up.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	spanPeriod = 200 * time.Millisecond
	warmup     = 300 * time.Millisecond
)

var (
	stop  int32
	sink  uint64
	outMu sync.Mutex
	out   = bufio.NewWriter(os.Stdout)
)

func logf(format string, args ...interface{}) {
	outMu.Lock()
	fmt.Fprintf(out, format, args...)
	out.Flush()
	outMu.Unlock()
}

//go:noinline
func labelledSpin(until time.Time) {
	for atomic.LoadInt32(&stop) == 0 && time.Now().Before(until) {
		for i := 0; i < 1000; i++ {
			sink += uint64(i)
		}
	}
}

//go:noinline
func unlabelledSpin(until time.Time) {
	for atomic.LoadInt32(&stop) == 0 && time.Now().Before(until) {
		for i := 0; i < 1000; i++ {
			sink += uint64(i)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	for {
		if _, err := rand.Read(b); err != nil {
			panic(err)
		}
		for _, c := range b {
			// An all-zero id means "none" to readers: draw again (practically never).
			if c != 0 {
				return hex.EncodeToString(b)
			}
		}
	}
}

func labelled(id int, lock, many bool, wg *sync.WaitGroup) {
	defer wg.Done()
	if lock {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	for atomic.LoadInt32(&stop) == 0 {
		trace, span := randomHex(16), randomHex(8)
		logf("SPAN %d %s %s\n", id, trace, span)
		kv := []string{"trace_id", trace, "span_id", span, "component", "golabels"}
		if many {
			// Ten labels: the map spreads them over two buckets.
			for i := 0; i < 7; i++ {
				kv = append(kv, fmt.Sprintf("extra_%d", i), randomHex(4))
			}
		}
		pprof.Do(context.Background(), pprof.Labels(kv...), func(context.Context) {
			labelledSpin(time.Now().Add(spanPeriod))
		})
	}
}

func unlabelled(wg *sync.WaitGroup) {
	defer wg.Done()
	for atomic.LoadInt32(&stop) == 0 {
		unlabelledSpin(time.Now().Add(spanPeriod))
	}
}

func main() {
	seconds := 10
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil && n > 0 {
			seconds = n
		}
	}
	logf("PID %d\n", os.Getpid())
	// A profiler learns a new process on its first samples, and one busy with other new
	// processes may take a while: start the spans once it had time to, as a service would.
	time.Sleep(warmup)
	var wg sync.WaitGroup
	wg.Add(3)
	go labelled(1, true, false, &wg)
	go labelled(2, false, true, &wg)
	go unlabelled(&wg)
	time.Sleep(time.Duration(seconds) * time.Second)
	atomic.StoreInt32(&stop, 1)
	wg.Wait()
}
