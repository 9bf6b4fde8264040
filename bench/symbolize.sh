#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Symbolization speed and accuracy: autoprof's symbolizer (objsym, through
# build/bench/symbolize_tool), `addr2line -f -i -C` and `llvm-symbolizer --inlining -C` name the
# same N addresses (default 100000) drawn uniformly, with a fixed seed, from the code of the
# functions that have DWARF in:
#   libc    /usr/lib/x86_64-linux-gnu/libc.so.6 with its libc6-dbg debug file (by build ID);
#   c++     build/bench/symbolize_templates, a template-heavy C++ program built with -O2 -g.
# For each: addresses/second of autoprof cold (fresh process: load + one pass), autoprof warm
# (--repeat 5, mean of the last 4 passes), addr2line and llvm-symbolizer (one process each, all
# addresses on stdin), peak RSS of each process, and how often autoprof's answer equals
# addr2line's and llvm-symbolizer's (whole inline chain, per address).
# Differences are counted raw and normalized (outer-name aliases and clone suffixes such as .isra.0
# taken as equal, peers' chains clipped to the 8 frames autoprof keeps), by category, with
# EXAMPLES (default 3) examples of each.
#   bench/symbolize.sh [N] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${1:-100000}
SEED=${2:-42}
TOOL=$BUILD/bench/symbolize_tool
CXXBIN=$BUILD/bench/symbolize_templates
LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6

command -v addr2line >/dev/null || { echo "addr2line is missing (apt-get install binutils)" >&2; exit 1; }
LLVM_SYM=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
if [ -z "$LLVM_SYM" ]; then
	apt-get install -y -q llvm >/dev/null
	LLVM_SYM=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14)
fi
make --no-print-directory -s BUILD="$BUILD" "$TOOL" "$CXXBIN"

targets=()
bid=$(readelf -n "$LIBC" 2>/dev/null | awk '/Build ID:/ {print $3}')
LIBC_DBG=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if [ -n "$bid" ] && [ -r "$LIBC_DBG" ]; then
	targets+=("libc:$LIBC:$LIBC_DBG")
else
	echo "libc6-dbg is missing (apt-get install libc6-dbg): skipping libc" >&2
fi
targets+=("c++:$CXXBIN:")

# KEEP=DIR keeps the address lists and every tool's output there.
if [ -n "${KEEP:-}" ]; then
	tmp=$KEEP
	mkdir -p "$tmp"
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi

python3 - "$TOOL" "$LLVM_SYM" "$N" "$SEED" "$tmp" "${targets[@]}" <<'EOF'
import bisect, os, random, re, statistics, subprocess, sys, time

tool, llvm_sym, n, seed, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
targets = [t.split(":", 2) for t in sys.argv[6:]]
RUNS = 3  # each timed command runs this many times; the median is reported
HOT = 4096  # distinct addresses of the working-set run: what a profile's hot code looks like
EXAMPLES = int(os.environ.get("EXAMPLES", "3"))


def func_ranges(path):
    """[lo, hi) of every FUNC symbol with a size."""
    out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True).stdout
    r = []
    for ln in out.splitlines():
        f = ln.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND":
            size = int(f[2], 16) if f[2].startswith("0x") else int(f[2])
            if size:
                lo = int(f[1], 16)
                r.append((lo, lo + size))
    return r


def dwarf_ranges(path):
    """[lo, hi) of the compilation units' code, from .debug_aranges."""
    out = subprocess.run(["readelf", "--debug-dump=aranges", path], capture_output=True,
                         text=True).stdout
    r = []
    for m in re.finditer(r"^\s+([0-9a-f]{16}) ([0-9a-f]{16})$", out, re.M):
        lo, ln = int(m.group(1), 16), int(m.group(2), 16)
        if ln:
            r.append((lo, lo + ln))
    return r


def merge(r):
    out = []
    for lo, hi in sorted(r):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def sample(symfile):
    code = intersect(merge(func_ranges(symfile)), merge(dwarf_ranges(symfile)))
    total = sum(hi - lo for lo, hi in code)
    rng = random.Random(seed)
    starts, acc = [], 0
    for lo, hi in code:
        starts.append(acc)
        acc += hi - lo
    addrs = []
    for _ in range(n):
        x = rng.randrange(total)
        k = bisect.bisect_right(starts, x) - 1
        addrs.append(code[k][0] + x - starts[k])
    return addrs, total, len(code)


GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run(cmd, stdin_path, stdout_path):
    """Wall seconds, peak RSS (KiB) and stderr of one process. The RSS comes from GNU time when
    present: a child forked from this (large) Python process counts the parent's pages in its
    ru_maxrss until it execs."""
    rss_path = os.path.join(tmp, "rss")
    full = [GNU_TIME, "-f", "%M", "-o", rss_path] + cmd if GNU_TIME else cmd
    with open(stdin_path, "rb") as fi, open(stdout_path, "wb") as fo:
        t0 = time.monotonic()
        p = subprocess.Popen(full, stdin=fi, stdout=fo, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        t = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        sys.exit("%s failed (%d): %s" % (cmd[0], p.returncode, err.decode(errors="replace")[-500:]))
    rss = ru.ru_maxrss
    if GNU_TIME:
        with open(rss_path) as f:
            rss = int(f.read().split()[-1])
    return t, rss, err.decode()


def timed(cmd, stdin_path, stdout_path):
    res = [run(cmd, stdin_path, stdout_path) for _ in range(RUNS)]
    res.sort(key=lambda r: r[0])
    return res[len(res) // 2]


ADDR = re.compile(r"^0x[0-9a-f]+$")


def parse_gnu(path):
    """addr2line -a style: an address line, then function / file:line pairs."""
    out, cur = [], None
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        if ADDR.match(lines[i]):
            cur = []
            out.append(cur)
            i += 1
            continue
        fn, loc = lines[i], lines[i + 1] if i + 1 < len(lines) else "??:0"
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        cur.append((fn, loc))
        i += 2
    return out


def parse_llvm(path):
    """llvm-symbolizer style: function / file:line:column pairs, a blank line after each address."""
    out, cur = [], []
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        if lines[i] == "":
            out.append(cur)
            cur = []
            i += 1
            continue
        fn, loc = lines[i], lines[i + 1]
        loc = re.sub(r":\d+$", "", loc)  # column
        cur.append((fn, loc))
        i += 2
    if cur:
        out.append(cur)
    # llvm-symbolizer 14's demangler gives up on some names (std::swap's enable_if return
    # type) and prints them mangled: demangle those with c++filt, as GNU tools would.
    mangled = sorted({fn for chain in out for fn, _ in chain if fn.startswith("_Z")})
    if mangled:
        dem = subprocess.run(["c++filt"], input="\n".join(mangled) + "\n", capture_output=True,
                             text=True).stdout.splitlines()
        m = dict(zip(mangled, dem))
        out = [[(m.get(fn, fn), loc) for fn, loc in chain] for chain in out]
    return out


def norm_fn(fn):
    if fn == "[inlined]":
        return "??"
    return LLVM_LAMBDA.sub("'lambda'(", LAMBDA.sub(r"'lambda'(\1)", fn))


def norm_loc(loc):
    # Line 0 is printed "?" by addr2line and autoprof, "0" by llvm-symbolizer.
    return "??:0" if loc in ("??:?", "??:0") else re.sub(r":0$", ":?", loc)


def aliases(paths):
    """Function names that share a start address (getpid / __getpid / __GI___getpid)."""
    by_addr = {}
    for p in paths:
        out = subprocess.run(["readelf", "-sW", p], capture_output=True, text=True).stdout
        for ln in out.splitlines():
            f = ln.split()
            if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND":
                by_addr.setdefault(int(f[1], 16), set()).add(f[7].split("@")[0])
    names = {}
    for s in by_addr.values():
        for x in s:
            names.setdefault(x, set()).update(s)
    return names


CLONE = re.compile(r"(( \[clone \.[\w.]+\])+|( \(\.[\w.]+\))+|"
                   r"(\.(isra|constprop|part|cold|lto_priv|localalias)(\.\d+)?)+)$")
# LLVM's demangler writes a lambda 'lambda'(args) (or 'lambda0'...), GNU's {lambda(args)#1}.
LAMBDA = re.compile(r"\{lambda\(([^{}]*?)\)#\d+\}")
LLVM_LAMBDA = re.compile(r"'lambda\d*'\(")
MAXD = 8  # SYM_MAX_LINES: autoprof keeps the 7 innermost frames and the real function


def clip(chain):
    return chain if len(chain) <= MAXD else chain[:MAXD - 1] + chain[-1:]


def same_outer(x, y, alias):
    """Outermost names equal up to clone suffixes (.isra.0, [clone .cold]) and aliases."""
    x, y = CLONE.sub("", x), CLONE.sub("", y)
    return x == y or y in alias.get(x, ())


def compare(ap, other, alias):
    """Per address: same function chain, same file:line chain (raw), and the same after
    normalizing what is policy, not error: outer-name aliases and clone suffixes, and chains
    deeper than autoprof keeps. Returns counts and the differing addresses by category."""
    c = dict(fn=0, fn_norm=0, loc=0, loc_norm=0, both_norm=0)
    cats, ok = {}, []
    for i, (a, b) in enumerate(zip(ap, other)):
        fa = [norm_fn(x[0]) for x in a]
        fb = [norm_fn(x[0]) for x in b]
        la = [norm_loc(x[1]) for x in a]
        lb = [norm_loc(x[1]) for x in b]
        fbc, lbc = clip(fb), clip(lb)
        f_norm = (len(fa) == len(fbc) and fa[:-1] == fbc[:-1] and
                  (fa == fbc or same_outer(fa[-1], fbc[-1], alias)))
        c["fn"] += fa == fb
        c["fn_norm"] += f_norm
        c["loc"] += la == lb
        c["loc_norm"] += la == lbc
        c["both_norm"] += f_norm and la == lbc
        ok.append((f_norm, la == lbc))
        if fa == fb and la == lb:
            continue
        if len(fb) > MAXD and f_norm and la == lbc:
            cat = "chain deeper than 8 frames (autoprof keeps 7 innermost + real function)"
        elif len(fa) != len(fbc):
            cat = "inline depth differs"
        elif fa[:-1] != fbc[:-1]:
            cat = "inlined function name differs"
        elif fa[-1] != fbc[-1] and CLONE.sub("", fa[-1]) == CLONE.sub("", fbc[-1]):
            cat = "outer name: clone suffix (.isra.0, [clone .cold], ...)"
        elif fa[-1] != fbc[-1] and same_outer(fa[-1], fbc[-1], alias):
            cat = "outer name: another symbol at the same address (alias)"
        elif fa[-1] != fbc[-1]:
            cat = "outer function name differs"
        elif [x.rsplit(":", 1)[0] for x in la] != [x.rsplit(":", 1)[0] for x in lbc]:
            cat = "file differs"
        else:
            cat = "line differs"
        cats.setdefault(cat, []).append(i)
    return c, cats, ok


def short(s, width=90):
    return s if len(s) <= width else s[:width // 2 - 2] + " .. " + s[-(width // 2 - 2):]


def show(chain):
    return " <- ".join("%s @ %s" % (short(norm_fn(f)), l) for f, l in chain) or "(nothing)"


results = []
for name, binary, debug in targets:
    symfile = debug or binary
    addrs, code_bytes, nranges = sample(symfile)
    nfunc = len({lo for lo, hi in func_ranges(symfile)})
    apath = os.path.join(tmp, name + ".addrs")
    with open(apath, "w") as f:
        f.write("".join("0x%x\n" % a for a in addrs))
    dbg_args = [debug] if debug else []
    o_ap, o_a2l, o_llvm = (os.path.join(tmp, name + s) for s in (".ap", ".a2l", ".llvm"))

    cold_t, cold_rss, _ = timed([tool, "-a", binary] + dbg_args, apath, o_ap)
    warm_runs = []
    for _ in range(RUNS):
        t, rss, err = run([tool, "--repeat", "5", "--quiet", "--times", binary] + dbg_args,
                          apath, os.devnull)
        passes = [float(m) for m in re.findall(r"^pass \d+ ([0-9.]+)$", err, re.M)]
        load = float(re.search(r"^load ([0-9.]+)", err, re.M).group(1))
        first = passes[0]
        warm_runs.append((statistics.mean(passes[1:]), rss, load, first))
    warm_runs.sort()
    warm_t, warm_rss, load_t, first_t = warm_runs[len(warm_runs) // 2]
    # The same number of lookups over HOT distinct addresses (they fit autoprof's cache).
    hpath = os.path.join(tmp, name + ".hot")
    with open(hpath, "w") as f:
        f.write("".join("0x%x\n" % addrs[i % HOT] for i in range(n)))
    hot_runs = []
    for _ in range(RUNS):
        _, _, err = run([tool, "--repeat", "5", "--quiet", "--times", binary] + dbg_args, hpath,
                        os.devnull)
        hot_runs.append(statistics.mean(
            float(m) for m in re.findall(r"^pass [1-9]\d* ([0-9.]+)$", err, re.M)))
    hot_t = statistics.median(hot_runs)
    a2l_hot_t, _, _ = run(["addr2line", "-f", "-i", "-C", "-e", binary], hpath, os.devnull)
    a2l_t, a2l_rss, _ = timed(["addr2line", "-a", "-f", "-i", "-C", "-e", binary], apath, o_a2l)
    llvm_t, llvm_rss, _ = timed([llvm_sym, "--functions=linkage", "--inlining", "-C",
                                 "--obj=" + binary], apath, o_llvm)

    ap, a2l, llvm = parse_gnu(o_ap), parse_gnu(o_a2l), parse_llvm(o_llvm)
    assert len(ap) == n and len(a2l) == n and len(llvm) == n, (len(ap), len(a2l), len(llvm))
    alias = aliases([binary] + dbg_args)
    frames = sum(len(c) for c in ap)
    inl = sum(1 for c in ap if len(c) > 1)

    print("\nsymbolization, %s: %s%s" % (name, binary, " + " + debug if debug else ""))
    print("%d addresses (seed %d) over %.1f MiB of code in %d function symbols; "
          "autoprof: %d frames, %.1f %% of addresses inside inlined code, %d distinct addresses"
          % (n, seed, code_bytes / 2**20, nfunc, frames, 100.0 * inl / n, len(set(addrs))))
    print("%-34s %14s %10s %12s" % ("", "addresses/s", "seconds", "peak RSS MiB"))
    rows = [("autoprof cold (load + 1 pass)", cold_t, cold_rss),
            ("autoprof warm (passes 2-5, mean)", warm_t, warm_rss),
            ("addr2line -f -i -C", a2l_t, a2l_rss),
            ("llvm-symbolizer --inlining -C", llvm_t, llvm_rss)]
    for label, t, rss in rows:
        print("%-34s %14.0f %10.3f %12.1f" % (label, n / t, t, rss / 1024.0))
    print("%-34s %14.0f %10.3f" % ("autoprof warm, %d distinct" % HOT, n / hot_t, hot_t))
    print("%-34s %14.0f %10.3f" % ("addr2line, %d distinct" % HOT, n / a2l_hot_t, a2l_hot_t))
    print("autoprof inside the cold process: load %.3f s, first pass %.3f s (%.0f addresses/s)"
          % (load_t, first_t, n / first_t))
    print("speed-up over addr2line: cold %.1fx, warm %.1fx, warm on %d distinct %.1fx; over "
          "llvm-symbolizer: cold %.1fx, warm %.1fx" % (a2l_t / cold_t, a2l_t / warm_t, HOT,
                                                      a2l_hot_t / hot_t, llvm_t / cold_t,
                                                      llvm_t / warm_t))
    agree, oks = {}, []
    for peer, other in (("addr2line", a2l), ("llvm-symbolizer", llvm)):
        c, cats, ok = compare(ap, other, alias)
        agree[peer] = c
        oks.append(ok)
        pct = {k: 100.0 * v / n for k, v in c.items()}
        print("agreement with %s, per address, whole inline chain: functions %.2f %% (%.2f %% "
              "normalized), file:line %.2f %% (%.2f %% normalized), both normalized %.2f %%"
              % (peer, pct["fn"], pct["fn_norm"], pct["loc"], pct["loc_norm"], pct["both_norm"]))
        for cat, idx in sorted(cats.items(), key=lambda kv: -len(kv[1])):
            print("  %6d  %s, e.g." % (len(idx), cat))
            for i in idx[:EXAMPLES]:
                print("    0x%x autoprof: %s" % (addrs[i], show(ap[i])))
                print("    %s %s: %s" % (" " * len("0x%x" % addrs[i]), peer, show(other[i])))
    either = [sum(1 for x, y in zip(*oks) if x[k] or y[k]) / n for k in (0, 1)]
    print("agreement with at least one of the two (normalized): functions %.2f %%, "
          "file:line %.2f %%" % (100 * either[0], 100 * either[1]))
    results.append((name, a2l_t / warm_t, a2l_hot_t / hot_t, agree["addr2line"],
                    agree["llvm-symbolizer"], either))

print("\ngoals (normalized: outer-name aliases and clone suffixes equal, chains clipped to 8):")
for name, speed, hot_speed, a2l_c, llvm_c, either in results:
    fn, fnn, loc, locn = (a2l_c[k] / n for k in ("fn", "fn_norm", "loc", "loc_norm"))
    lfn, llocn = llvm_c["fn_norm"] / n, llvm_c["loc_norm"] / n
    verdict = lambda ok: "met" if ok else "NOT met"
    print("  %-5s warm >= 20x addr2line: %.1fx on %d distinct addresses -> %s; %.1fx on a "
          "cache-sized working set -> %s" % (name, speed, n, verdict(speed >= 20), hot_speed,
                                             verdict(hot_speed >= 20)))
    print("        >= 99 %% agreement with addr2line: functions %.2f %% raw, %.2f %% normalized "
          "-> %s; file:line %.2f %% raw, %.2f %% normalized -> %s"
          % (100 * fn, 100 * fnn, verdict(fnn >= 0.99), 100 * loc, 100 * locn,
             verdict(locn >= 0.99)))
    print("        with llvm-symbolizer: functions %.2f %%, file:line %.2f %% normalized; with "
          "either: functions %.2f %%, file:line %.2f %% -> %s"
          % (100 * lfn, 100 * llocn, 100 * either[0], 100 * either[1],
             verdict(min(either) >= 0.99)))
EOF
