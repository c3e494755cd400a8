#!/usr/bin/env python3
"""Every command's output on every shared trace, written to a folder, and two such folders compared: the check
that a change of structure changes no behaviour.

    python3 tools/command_outputs.py run MESHSCOPE OUT [--traces DIR] [--input PATH ...]
    python3 tools/command_outputs.py compare OUT_A OUT_B

`run` imports each input (every file and folder of traces under DIR/*/, default ../shared/traces, and each
--input: a generated job, a profile's traces), then runs on the profile info, report, diff (of the profile with
itself), compare, export and whatif (scales, links, layout, hardware), each as text and as JSON where it has both, then summarize (in place) and info again,
and the model commands (predict, search, plan) once. Per command it keeps the exit status, standard output and standard error (an export: the SHA-256 of
the file written). Profiles are written in one fixed scratch folder, so that the paths the outputs print are the
same from one run to the next; timing lines (MESHSCOPE_TIMING) are not asked for, and the time `search` prints is
masked.

`compare` lists every output that differs (with the first differing line) and exits 1 when any does.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SCRATCH = Path("/tmp/meshscope-command-outputs")
# What an output may differ in from one run to the next: the time a search took.
MASKS = [
    (re.compile(rb"\(\d+(\.\d+)? ms\)"), b"(N ms)"),
    (re.compile(rb'"search_ms": [0-9.e+-]+'), b'"search_ms": N'),
]
TRACE_SUFFIXES = (".json", ".json.gz", ".sqlite", ".msdb")

PROFILE_COMMANDS = [
    ("info", ["info", "{p}"]),
    ("info.json", ["info", "--json", "{p}"]),
    ("report", ["report", "{p}"]),
    ("report.json", ["report", "--json", "{p}"]),
    ("report.cpu-ops", ["report", "--cpu-ops", "{p}"]),
    ("diff", ["diff", "{p}", "{p}"]),
    ("diff.json", ["diff", "--json", "{p}", "{p}"]),
    ("compare", ["compare", "{p}"]),
    ("compare.json", ["compare", "--json", "{p}"]),
    ("compare.model.json", ["compare", "--json", "{p}", "--model", "llama3-8b", "--hardware", "h100-sxm"]),
    ("export", ["export", "{p}", "-o", "{w}/export.json"]),
    ("whatif", ["whatif", "{p}", "--scale", "gemm=0.5", "--scale", "comm=2", "--fix-straggler"]),
    ("whatif.links.json", ["whatif", "--json", "{p}", "--link", "nvlink=100", "--latency", "inter_node=8"]),
    ("whatif.layout", ["whatif", "{p}", "--tp", "4", "--dp", "2"]),
    ("whatif.hardware.json", ["whatif", "--json", "{p}", "--hardware", "b200"]),
    # Last: summarize rewrites the profile (its summaries computed again from the events), then read back.
    ("summarize", ["summarize", "{p}"]),
    ("info.after-summarize.json", ["info", "--json", "{p}"]),
]

MODEL_COMMANDS = [
    ("predict", ["predict", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "8", "--tp", "2"]),
    ("predict.json", ["predict", "--json", "--explain", "--model", "llama3-70b", "--hardware", "h100-sxm",
                      "--gpus", "64", "--tp", "8", "--pp", "2"]),
    ("search", ["search", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "16"]),
    ("search.json", ["search", "--json", "--model", "llama3-70b", "--hardware", "h100-sxm", "--gpus", "64"]),
    ("plan", ["plan", "--gpus", "1024", "--gpu-mtbf-hours", "50000", "--checkpoint-s", "60", "--params", "70"]),
]


def is_trace(path: Path) -> bool:
    return path.is_file() and path.name.endswith(TRACE_SUFFIXES)


def inputs_under(traces: Path):
    """Each trace file, and each folder holding trace files, one level below each collection of DIR."""
    found = []
    for collection in sorted(p for p in traces.iterdir() if p.is_dir()):
        for entry in sorted(collection.iterdir()):
            if is_trace(entry) or (entry.is_dir() and any(is_trace(f) for f in entry.rglob("*"))):
                found.append(entry)
    return found


def slug(path: Path, root: Path) -> str:
    try:
        name = str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        name = str(path.resolve()).lstrip("/")
    return name.replace("/", "__")


def run_one(meshscope: str, arguments, work: Path, out: Path) -> int:
    done = subprocess.run([meshscope] + arguments, cwd=work, capture_output=True,
                          env={k: v for k, v in os.environ.items() if k != "MESHSCOPE_TIMING"})
    stdout = done.stdout
    if arguments and arguments[0] == "search":
        for pattern, replacement in MASKS:
            stdout = pattern.sub(replacement, stdout)
    out.write_bytes(f"exit {done.returncode}\n--- stdout\n".encode() + stdout + b"--- stderr\n" + done.stderr)
    return done.returncode


def run(meshscope: str, out_dir: Path, traces: Path, extra) -> int:
    meshscope = str(Path(meshscope).resolve())
    out_dir.mkdir(parents=True, exist_ok=True)
    inputs = inputs_under(traces) + [Path(e) for e in extra]
    for index, source in enumerate(inputs):
        name = slug(source, traces)
        work = SCRATCH / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        target = out_dir / name
        target.mkdir(exist_ok=True)
        profile = work / "p.msdb"
        print(f"[{index + 1}/{len(inputs)}] {name}", file=sys.stderr)
        if source.name.endswith(".msdb"):
            shutil.copyfile(source, profile)
        elif run_one(meshscope, ["import", str(source.resolve()), "-o", str(profile)], work,
                     target / "import") != 0:
            continue
        for label, arguments in PROFILE_COMMANDS:
            filled = [a.format(p=str(profile), w=str(work)) for a in arguments]
            run_one(meshscope, filled, work, target / label)
            if label == "export":
                written = work / "export.json"
                digest = hashlib.sha256(written.read_bytes()).hexdigest() if written.exists() else "none"
                with open(target / label, "a") as f:
                    f.write(f"--- sha256 of the export\n{digest}\n")
                written.unlink(missing_ok=True)
    model = out_dir / "_model"
    model.mkdir(exist_ok=True)
    for label, arguments in MODEL_COMMANDS:
        run_one(meshscope, arguments, SCRATCH, model / label)
    shutil.rmtree(SCRATCH, ignore_errors=True)
    print(f"{len(inputs)} inputs, outputs in {out_dir}", file=sys.stderr)
    return 0


def compare(a: Path, b: Path) -> int:
    names_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    names_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    differ = 0
    for name in sorted(names_a ^ names_b):
        print(f"only in {a if name in names_a else b}: {name}")
        differ += 1
    for name in sorted(names_a & names_b):
        x, y = (a / name).read_bytes(), (b / name).read_bytes()
        if x == y:
            continue
        differ += 1
        lines_x, lines_y = x.splitlines(), y.splitlines()
        first = next((i for i, (u, v) in enumerate(zip(lines_x, lines_y)) if u != v),
                     min(len(lines_x), len(lines_y)))
        show = lambda lines: lines[first].decode(errors="replace") if first < len(lines) else "(end)"
        print(f"{name}: line {first + 1}\n  - {show(lines_x)}\n  + {show(lines_y)}")
    print(f"{len(names_a & names_b)} outputs compared, {differ} differ")
    return 1 if differ else 0


def main() -> int:
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "run":
        traces = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
        extra = []
        rest = args[3:]
        while rest:
            if rest[0] == "--traces" and len(rest) > 1:
                traces = Path(rest[1])
            elif rest[0] == "--input" and len(rest) > 1:
                extra.append(rest[1])
            else:
                print(__doc__.strip(), file=sys.stderr)
                return 2
            rest = rest[2:]
        return run(args[1], Path(args[2]), traces, extra)
    if len(args) == 3 and args[0] == "compare":
        return compare(Path(args[1]), Path(args[2]))
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
