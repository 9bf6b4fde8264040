# SPDX-License-Identifier: GPL-2.0-only
"""Two busy Python threads for the Python frames test: the main thread in main_busy, a worker
thread in py_worker_hot under worker; for argv[1] seconds. Each thread's samples must carry its
own Python frames, never the other's. 40 idle threads started first put the main thread's state
deep in the interpreter's list (newest first)."""
import sys
import threading
import time


def py_worker_hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def worker(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        py_worker_hot(20000)


def main_busy(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(i for i in range(1000))


print(flush=True)
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
stop = threading.Event()
idle = [threading.Thread(target=stop.wait) for _ in range(40)]
for i in idle:
    i.start()
t = threading.Thread(target=worker, args=(seconds,))
t.start()
main_busy(seconds)
t.join()
stop.set()
