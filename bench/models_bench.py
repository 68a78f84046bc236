#!/usr/bin/python3
"""Every real program of ../shared/models on every backend: time and peak memory.

usage: bench/models_bench.py [--cxla PATH] [--backends interpreter,cpu] [--repeat N]
                             [--timeout S] [--threads N] [--shared DIR | --no-shared]
                             [--dir DIR]... [--markdown FILE] [NAME ...]

Each program (every *.hlo, *.mlir and *.pb file of the shared models folder, and of each
--dir folder) runs as `cxla run --backend B --repeat N --timeout S -q PROGRAM` with
generated inputs, one process per program and backend, and the script reports:

- the time of the first run (cold: first touches of memory) and the best of the N runs
  (`cxla run --repeat`'s "first" and "min"), and the parse and compile times;
- the peak resident memory of the process, measured from outside: the child's own
  ru_maxrss from wait4(), so it holds whatever `cxla run` prints; when `cxla run` prints a
  line with "peak" in it, that figure is shown too;
- the size of the program's parameters (from the ENTRY computation's parameter
  instructions), to judge the peak against; programs whose parameters exceed
  --max-parameters-gib (8 by default) are skipped, as their generated inputs would
  exhaust a small machine.

A program that runs longer than --timeout seconds (120 by default) is cancelled by `cxla
run --timeout` and, if it still has not ended 30 s later, killed; its row says so.
Progress goes to stderr as the runs go (a line per run, and a still-running line every
15 s); the markdown table goes to stdout (and to --markdown FILE). NAME arguments keep
only the programs whose file name contains one of them.

The interpreter runs each computation on one thread; the cpu backend uses
CXLA_NUM_THREADS (--threads sets it; default: one per core). Compiled kernels go to a
fresh cache folder for the whole session, so the compile column is the cold compile.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Bytes per element of the HLO element types (sub-byte types rounded up to a byte).
TYPE_BYTES = {
    "pred": 1, "s2": 1, "s4": 1, "s8": 1, "s16": 2, "s32": 4, "s64": 8,
    "u2": 1, "u4": 1, "u8": 1, "u16": 2, "u32": 4, "u64": 8,
    "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "c64": 8, "c128": 16,
}
SHAPE_RE = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,<=]*)\]")


def parameter_bytes(path):
    """The bytes of the ENTRY computation's parameters, from its parameter instructions
    (HLO text only; None when they cannot be read)."""
    if not path.endswith(".hlo"):
        return None
    shapes = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            in_entry = False
            for line in f:
                if line.startswith("ENTRY"):
                    in_entry = True
                elif in_entry and line.startswith("}"):
                    break
                elif in_entry and " parameter(" in line and "=" in line:
                    shapes.append(line.split("=", 1)[1].split(" parameter(")[0])
    except OSError:
        return None
    if not shapes:
        return None
    total = 0
    for t, dims in SHAPE_RE.findall(" ".join(shapes)):
        size = TYPE_BYTES.get(t, 1 if t.startswith("f8") else None)
        if size is None:
            continue
        n = 1
        for d in dims.replace("<=", "").split(","):
            if d:
                n *= int(d)
        total += n * size
    return total


def programs(folders, names):
    found = []
    for folder in folders:
        for f in sorted(os.listdir(folder)):
            if not f.endswith((".hlo", ".mlir", ".pb")):
                continue
            if names and not any(n in f for n in names):
                continue
            found.append(os.path.join(folder, f))
    return found


def run_one(cxla, backend, path, repeat, timeout, env, label):
    """Runs one program on one backend; returns a dict with status and figures."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    cmd = [cxla, "run", "--backend", backend, "--repeat", str(repeat), "--timeout",
           str(timeout), "-q", path]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)
    next_note = 15.0
    killed = False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            break
        elapsed = time.monotonic() - t0
        if elapsed >= next_note:
            print("    %s: still running, %.0f s" % (label, elapsed), file=sys.stderr,
                  flush=True)
            next_note += 15.0
        if elapsed > timeout + 30 and not killed:
            os.killpg(p.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.1)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    err.seek(0)
    text = err.read().decode("utf-8", "replace")
    out.close()
    err.close()
    r = {"wall": wall, "peak_rss": usage.ru_maxrss * 1024, "status": "ok"}
    m = re.search(r"^.*\bpeak\b.*$", text, re.M | re.I)
    if m:
        r["cxla_peak"] = m.group(0).strip()
    for name in ("parse", "compile", "inputs"):
        m = re.search(r"^%s\s+median\s+([0-9.]+) ms" % name, text, re.M)
        if m:
            r[name] = float(m.group(1)) / 1e3
    m = re.search(r"^run\s+median\s+([0-9.]+) ms\s+min\s+([0-9.]+) ms"
                  r"(?:.*?first\s+([0-9.]+) ms)?", text, re.M)
    if m:
        r["best"] = float(m.group(2)) / 1e3
        r["first"] = float(m.group(3)) / 1e3 if m.group(3) else float(m.group(1)) / 1e3
    if killed:
        r["status"] = "killed after %.0f s" % wall
    elif p.returncode != 0:
        lines = [l for l in text.strip().splitlines() if l.strip()]
        why = lines[-1] if lines else "exit status %d" % p.returncode
        if "--timeout" in why and "longer than" in why:
            r["status"] = "> %g s" % timeout
        else:
            r["status"] = "fails: " + shorten(why)
    elif "best" not in r:
        r["status"] = "no run time in cxla's output"
    return r


def shorten(text, width=90):
    text = text.replace("|", "/")
    text = re.sub(r"^cxla: ", "", text)
    text = text.replace(os.path.expanduser("~"), "~")
    return text if len(text) <= width else text[: width - 3] + "..."


def ms(seconds):
    if seconds is None:
        return "-"
    v = seconds * 1e3
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3f" % v


def mib(nbytes):
    if nbytes is None:
        return "?"
    v = nbytes / 2**20
    return "%.0f" % v if v >= 10 else "%.1f" % v if v >= 1 else "%.2f" % v


def load_line():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxla", default=os.path.join(ROOT, "build", "cxla"))
    ap.add_argument("--backends", default="cpu,interpreter")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per program and backend (the first is the cold one)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds per program and backend")
    ap.add_argument("--threads", type=int, default=0, help="CXLA_NUM_THREADS (0: unset)")
    ap.add_argument("--shared", default=os.environ.get("CXLA_SHARED_DIR") and
                    os.path.join(os.environ["CXLA_SHARED_DIR"], "models") or
                    os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--no-shared", action="store_true", help="only the --dir folders")
    ap.add_argument("--dir", action="append", default=[], help="another folder of programs")
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--max-parameters-gib", type=float, default=8.0,
                    help="skip programs whose parameters take more (generated inputs of "
                         "tens of GiB would exhaust the machine)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()

    if not os.access(a.cxla, os.X_OK):
        sys.exit("models_bench: no cxla at %s (build it, or give --cxla)" % a.cxla)
    folders = []
    if not a.no_shared:
        if os.path.isdir(a.shared):
            folders.append(a.shared)
        else:
            print("models_bench: %s is absent: skipping the shared models" % a.shared,
                  file=sys.stderr)
    for d in a.dir:
        if not os.path.isdir(d):
            sys.exit("models_bench: --dir %s is not a folder" % d)
        folders.append(d)
    paths = programs(folders, a.names)
    if not paths:
        sys.exit("models_bench: no programs to run")
    backends = [b.strip() for b in a.backends.split(",") if b.strip()]

    env = dict(os.environ)
    if a.threads > 0:
        env["CXLA_NUM_THREADS"] = str(a.threads)
    cache = tempfile.mkdtemp(prefix="cxla-models-cache-")
    env["CXLA_CACHE_DIR"] = cache
    load_before = load_line()
    results = {}
    t_start = time.monotonic()
    try:
        total = len(paths) * len(backends)
        k = 0
        for path in paths:
            name = os.path.splitext(os.path.basename(path))[0]
            for b in backends:
                k += 1
                label = "[%d/%d] %s on %s" % (k, total, name, b)
                print(label, file=sys.stderr, flush=True)
                pbytes = parameter_bytes(path)
                if pbytes is not None and pbytes > a.max_parameters_gib * 2**30:
                    r = {"wall": 0.0, "peak_rss": None,
                         "status": "skipped: parameters %.1f GiB > --max-parameters-gib %g"
                                   % (pbytes / 2**30, a.max_parameters_gib)}
                else:
                    r = run_one(a.cxla, b, path, a.repeat, a.timeout, env, label)
                results[(path, b)] = r
                if r["status"] == "ok":
                    note = "first %s ms, best %s ms, peak %s MiB" % (
                        ms(r.get("first")), ms(r.get("best")), mib(r["peak_rss"]))
                else:
                    note = r["status"]
                print("    %s (%.1f s)" % (note, r["wall"]), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    minutes = (time.monotonic() - t_start) / 60

    lines = []
    lines.append("`bench/models_bench.py --repeat %d --timeout %g%s`: load average %s before, "
                 "%s after, %.1f minutes in all." % (a.repeat, a.timeout,
                                                      " --threads %d" % a.threads if a.threads
                                                      else "", load_before, load_line(),
                                                      minutes))
    lines.append("")
    head = ["program", "parameters MiB"]
    for b in backends:
        short = "interp" if b.startswith("interp") else b
        head += ["%s compile ms" % short, "%s first ms" % short, "%s best ms" % short,
                 "%s peak MiB" % short]
    if "cpu" in backends and any(b.startswith("interp") for b in backends):
        head.append("interp/cpu best")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + " --- |" * len(head))
    notes = []
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        if len(folders) > 1 and os.path.dirname(path) != folders[0]:
            name = os.path.join(os.path.basename(os.path.dirname(path)), name)
        row = [name, mib(parameter_bytes(path))]
        best = {}
        for b in backends:
            r = results[(path, b)]
            if r["status"] != "ok":
                row += [r["status"], "", "",
                        mib(r["peak_rss"]) if r["peak_rss"] is not None else "-"]
                continue
            compile_s = r.get("compile")
            row += [ms(compile_s), ms(r.get("first")), ms(r.get("best")), mib(r["peak_rss"])]
            best[b] = r.get("best")
            if "cxla_peak" in r:
                notes.append("%s on %s: cxla says `%s`" % (name, b, r["cxla_peak"]))
        if len(head) > len(row):
            interp = next((best[b] for b in best if b.startswith("interp")), None)
            cpu = best.get("cpu")
            row.append("%.1f" % (interp / cpu) if interp and cpu else "-")
        lines.append("| " + " | ".join(row) + " |")
    if notes:
        lines.append("")
        lines += ["- " + n for n in notes]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
