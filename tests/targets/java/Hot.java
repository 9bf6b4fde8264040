// SPDX-License-Identifier: GPL-2.0-only
/*
 * A JIT workload for tests/integration/test_java.py and bench/runtimes.sh: Hot.main calls
 * spinHot and spinCold, which do the same loop 3 and 1 million times, so the JIT compiles both
 * and their CPU time is 3:1. Prints its pid, then runs for SECONDS (or, with ITERATIONS as a
 * second argument, that many rounds, and prints the rounds per second it managed).
 */
public class Hot {
    static volatile long sink;

    static long spinHot(long n) {
        long x = 0;
        for (long i = 0; i < n; i++)
            x += (i * 31) ^ (x >>> 3);
        return x;
    }

    static long spinCold(long n) {
        long x = 0;
        for (long i = 0; i < n; i++)
            x += (i * 31) ^ (x >>> 3);
        return x;
    }

    public static void main(String[] args) {
        System.out.println(ProcessHandle.current().pid());
        System.out.flush();
        if (args.length > 1) {
            long rounds = Long.parseLong(args[1]);
            long start = System.nanoTime();
            for (long r = 0; r < rounds; r++)
                sink += spinHot(3000000) + spinCold(1000000);
            double secs = (System.nanoTime() - start) / 1e9;
            System.out.println(rounds / secs);
            return;
        }
        long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        while (System.nanoTime() < end)
            sink += spinHot(3000000) + spinCold(1000000);
    }
}
