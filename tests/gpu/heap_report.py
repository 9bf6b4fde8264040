# SPDX-License-Identifier: GPL-2.0-only
"""What autoprof saw of one tests/gpu/torch_keep.py heap run, for tests/gpu/device_check.sh:
its live GPU bytes for the process (gpuheap?pid=P&format=folded, lines "exe;root;...;leaf
BYTES"; the same in /metrics, autoprof_gpu_memory_inuse_bytes{pid=P}) against PyTorch's own
memory_reserved() and memory_allocated() (the program's JSON), the bytes by api label (from the
gpuheap pprof: runtime or driver for cudaMalloc'd segments, vmm for expandable segments), the
bytes under keep_weights and scratch, and the top stacks. Exits 0 when autoprof's total is
within TOL percent of memory_reserved, 1 otherwise.
    python3 heap_report.py MODE TRUTH_JSON FOLDED PPROF METRICS [TOL]"""
import gzip
import json
import re
import sys

MIB = 1 << 20
KNOWN = ("keep_weights", "scratch")
TOP = 5


def mib(n):
    return "%.2f MiB" % (n / MIB)


def folded(path):
    """[(bytes, [frames root first])] of a folded profile."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, _, value = line.rpartition(" ")
            try:
                out.append((int(float(value)), stack.split(";")))
            except ValueError:
                continue
    return out


def metric_sum(path, name, pid):
    total, rows = 0.0, []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith(name + "{"):
                continue
            labels, _, value = line.rpartition(" ")
            if re.search(r'\bpid="%d"' % pid, labels):
                total += float(value)
                rows.append(labels[len(name):] + " " + value.strip())
    return total, rows


# ---- a minimal protobuf reader for pprof's Profile ------------------------------------------

def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wire)
        yield num, wire, value


def ints(wire, value):
    """A repeated integer field's values: packed (bytes) or one varint."""
    if wire == 0:
        return [value]
    out, i = [], 0
    while i < len(value):
        v, i = varint(value, i)
        out.append(v)
    return out


def bytes_by_api(path):
    """{api label: gpu_inuse_space} of a gpuheap pprof, or None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        strings, types, samples = [], [], []
        for num, wire, value in fields(data):
            if num == 6:
                strings.append(value.decode("utf-8", "replace"))
            elif num == 1:
                types.append(dict((n, v) for n, _, v in fields(value)).get(1, 0))
            elif num == 2:
                vals, labels = [], []
                for n, w, v in fields(value):
                    if n == 2:
                        vals += ints(w, v)
                    elif n == 3:
                        lab = dict((k, x) for k, _, x in fields(v))
                        labels.append((lab.get(1, 0), lab.get(2, 0)))
                samples.append((vals, labels))
        names = [strings[t] for t in types]
        col = names.index("gpu_inuse_space")
        out = {}
        for vals, labels in samples:
            api = next((strings[s] for k, s in labels if strings[k] == "api"), "(none)")
            out[api] = out.get(api, 0) + vals[col]
        return out
    except (OSError, ValueError, IndexError, EOFError) as e:
        print("  (gpuheap pprof not read: %s)" % e)
        return None


def short(frames, known):
    """A stack in one line: the exe, the known functions in it, the 5 frames at the leaf."""
    cut = [f if len(f) <= 70 else f[:67] + "..." for f in frames]
    head = [cut[0]] + ["[%s]" % f for f in cut[1:-5] if any(re.search(r"\b%s\b" % k, f)
                                                             for k in known)]
    return "%s;...;%s (%d frames)" % (";".join(head), ";".join(cut[-5:]), len(frames))


def main():
    mode, truth_path, folded_path, pprof_path, metrics_path = sys.argv[1:6]
    tol = float(sys.argv[6]) if len(sys.argv) > 6 else 5.0
    with open(truth_path) as f:
        truth = json.load(f)
    pid = truth["pid"]
    stacks = folded(folded_path)
    total = sum(b for b, _ in stacks)
    inuse, rows = metric_sum(metrics_path, "autoprof_gpu_memory_inuse_bytes", pid)
    reserved, allocated = truth["memory_reserved"], truth["memory_allocated"]

    print("  autoprof gpuheap?pid=%d total: %s (%d bytes) in %d stacks" %
          (pid, mib(total), total, len(stacks)))
    print("  autoprof_gpu_memory_inuse_bytes{pid=\"%d\"}: %s (%s)" %
          (pid, mib(inuse), "; ".join(rows) or "no series"))
    print("  torch.cuda.memory_reserved():  %s (%d bytes, %s segments)" %
          (mib(reserved), reserved, truth.get("segments")))
    print("  torch.cuda.memory_allocated(): %s (%d bytes)" % (mib(allocated), allocated))
    # PyTorch 2.1+ has pytorch:malloc/free USDT probes: its tensors are in the profile too, as
    # api="pytorch", beside the segments (every other api label).
    apis = bytes_by_api(pprof_path)
    tensors = apis.get("pytorch", 0) if apis else 0
    segments = total - tensors
    ratio = segments / reserved if reserved else 0.0
    print("  autoprof segments / memory_reserved:  %.4f (expected ~1.0: the caching allocator's"
          " segments come from cudaMalloc or cuMemCreate, which autoprof counts)" % ratio)
    if apis is not None:
        print("  by api label: %s (expected: %s, and pytorch where PyTorch has its USDT probes)" %
              (", ".join("%s %s" % (a, mib(b)) for a, b in sorted(apis.items())) or "none",
               "vmm" if "expandable" in mode else "runtime, or driver where cudart is static"))
    tensors_ok = True
    if tensors and allocated:
        # Tensors are sampled by bytes (gpu.pytorch-sample-interval): an estimate, held to 25 %.
        tratio = tensors / allocated
        tensors_ok = abs(tratio - 1) * 100 <= max(tol, 25)
        print("  autoprof tensors (api=pytorch, sampled) / memory_allocated: %.4f" % tratio)
    for k in KNOWN:
        under = sum(b for b, fr in stacks if any(re.search(r"\b%s\b" % k, f) for f in fr))
        f = truth.get("functions", {}).get(k, {})
        print("  under %s: %s (its tensors: %s kept%s)" %
              (k, mib(under), mib(f.get("kept_bytes", 0)),
               ", %s made and dropped, their segments cached" % mib(f["made_bytes"])
               if f.get("made_bytes") else ""))
    top = sorted(stacks, key=lambda s: -s[0])[:TOP]
    print("  top %d stacks:" % len(top))
    for b, fr in top:
        print("    %12s  %s" % (mib(b), short(fr, KNOWN)))
    seen = any(re.search(r"\bkeep_weights\b", f) for _, fr in top for f in fr)
    print("  keep_weights in the top stacks: %s" % ("yes" if seen else "NO"))
    ok = reserved > 0 and abs(ratio - 1) * 100 <= tol and tensors_ok
    print("  %s %s: autoprof's segments are %swithin %g %% of memory_reserved%s" %
          ("PASS" if ok else "FAIL", mode, "" if ok else "NOT ", tol,
           " (and its tensors of memory_allocated)" if tensors else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
