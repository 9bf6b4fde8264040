// SPDX-License-Identifier: GPL-2.0-only
/*
 * An allocation workload for tests/integration/test_java.py: each round allocHot allocates three
 * byte[3104] (3,120 bytes each with the array's header) and allocCold three Strings of 1,000
 * Latin-1 characters (a String of 24 bytes and its byte[1000] of 1,016: 1,040 bytes each), so
 * that allocHot allocates 3x the bytes of allocCold. Both keep what they allocate reachable
 * from a static field, so that no JIT can elide the allocation. Prints its pid, then runs for
 * SECONDS, printing each second the bytes each allocated so far by the JVM's own count
 * (ThreadMXBean: "at MILLIS HOT COLD", MILLIS the wall clock), and at the end "HOT COLD". With
 * "bench ROUNDS" (bench/javaalloc.sh): prints its pid, warms up, waits for a line on stdin, then
 * does ROUNDS rounds of both and prints "rounds_per_s N".
 */
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;

public class Alloc {
    static volatile Object sink;
    static final byte[] TEXT = new byte[1000];

    static void allocHot() {
        for (int i = 0; i < 3; i++)
            sink = new byte[3104];
    }

    static void allocCold() {
        for (int i = 0; i < 3; i++)
            sink = new String(TEXT, 0, TEXT.length, StandardCharsets.ISO_8859_1);
    }

    public static void main(String[] args) throws Exception {
        java.util.Arrays.fill(TEXT, (byte) 'x');
        System.out.println(ProcessHandle.current().pid());
        System.out.flush();
        if (args[0].equals("bench")) {
            long rounds = Long.parseLong(args[1]);
            for (int r = 0; r < 20000; r++) {
                allocHot();
                allocCold();
            }
            new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
            long start = System.nanoTime();
            for (long r = 0; r < rounds; r++) {
                allocHot();
                allocCold();
            }
            double secs = (System.nanoTime() - start) / 1e9;
            System.out.println("rounds_per_s " + (long) (rounds / secs));
            return;
        }
        com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId(), hot = 0, cold = 0;
        long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        long said = 0;
        while (System.nanoTime() < end) {
            // What it allocated so far, each second: "at MILLIS HOT COLD".
            if (System.nanoTime() - said >= 1000000000L) {
                said = System.nanoTime();
                System.out.println("at " + System.currentTimeMillis() + " " + hot + " " + cold);
                System.out.flush();
            }
            long a = mx.getThreadAllocatedBytes(tid);
            for (int r = 0; r < 1000; r++)
                allocHot();
            long b = mx.getThreadAllocatedBytes(tid);
            for (int r = 0; r < 1000; r++)
                allocCold();
            long c = mx.getThreadAllocatedBytes(tid);
            hot += b - a;
            cold += c - b;
        }
        System.out.println(hot + " " + cold);
    }
}
