#!/usr/bin/env python3
"""Cuts the fuzzers' seed corpora small from the real traces in ../shared/traces (tests/fuzz/corpus/...).

Usage: tests/fuzz/make_seeds.py MESHSCOPE_BINARY
  (the binary imports one cut trace into the profile seed). Run again after changing the cuts; the seeds are
  checked in, so CI does not need the shared traces to fuzz.

Seeds (the harnesses' first input byte picks a mode where they have two; see each harness):
  corpus/kineto/   a handful of events with the metadata of several real traces (2021 and current formats, NCCL
                   collective args, CPU-only, AMD, ns timestamps, python functions, flows), plain and gzip
  corpus/nsys/     0x00 + the saxpy Nsight Systems export cut to a few rows per table (512-byte pages);
                   0x01 + SQL seeds that edit the harness's built-in export
  corpus/profile/  0x00 + a meshscope profile of a cut trace (512-byte pages); 0x01 + SQL seeds
  corpus/merge/    SQL scripts for the three per-rank files, separated by 0x01

Sources and licences of the cut traces (../shared/traces/README.md): HolisticTraceAnalysis (MIT), pytorch/kineto
(BSD-3-Clause), AMD-AGI/TraceLens (MIT), hpcgroup/pipit (MIT); each seed holds a few dozen events of one file.
"""
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "traces"))
CORPUS = os.path.join(HERE, "corpus")

KINETO = [
    ("nccl_collectives", "hta/nccl_parser_config/nccl_data.json.gz", 60),
    ("multi_rank", "hta/trace_filter/sampled_rank-1.json.gz", 40),
    ("cpu_only", "hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 30),
    ("amd", "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 40),
    ("ns_resolution", "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 30),
    ("format_2021", "kineto/resnet50_num_workers_0", 40),
    ("python_functions", "tracelens/h100_qwen1.5_0.5b_inference.json.gz", 40),
    ("rccl_generic", "tracelens/mi300_resnet_act_checkpoint.json.gz", 40),
]


def load_trace(path):
    if os.path.isdir(path):
        path = os.path.join(path, sorted(os.listdir(path))[0])
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def cut_events(trace, count):
    """Metadata kept; of the events, the first COUNT of each phase that matters, so that kernels, runtime calls,
    CPU ops, flows and metadata events all appear."""
    events = trace.get("traceEvents", [])
    kept, per_kind = [], {}
    for e in events:
        key = (e.get("ph"), e.get("cat"))
        if per_kind.get(key, 0) >= max(2, count // 6):
            continue
        per_kind[key] = per_kind.get(key, 0) + 1
        kept.append(e)
        if len(kept) >= count:
            break
    out = {k: v for k, v in trace.items() if k != "traceEvents"}
    out["traceEvents"] = kept
    return out


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def kineto_seeds():
    made = []
    for name, source, count in KINETO:
        trace = cut_events(load_trace(os.path.join(TRACES, source)), count)
        text = json.dumps(trace, separators=(",", ":")).encode()
        write(os.path.join(CORPUS, "kineto", name + ".json"), text)
        made.append(name)
    # One gzip seed, so that the readers' gzip paths are in the corpus.
    with open(os.path.join(CORPUS, "kineto", "nccl_collectives.json"), "rb") as f:
        write(os.path.join(CORPUS, "kineto", "nccl_collectives.json.gz"), gzip.compress(f.read(), mtime=0))
    return made


def shrink(db_path, keep_rows):
    db = sqlite3.connect(db_path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for t in tables:
        db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" ORDER BY rowid LIMIT {keep_rows})')
    db.commit()
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA page_size = 512")
    db.execute("VACUUM")
    db.close()


def nsys_seeds():
    work = tempfile.mkdtemp()
    try:
        path = os.path.join(work, "saxpy.sqlite")
        shutil.copy(os.path.join(TRACES, "nsys/saxpy_mpi_cuda_a100.sqlite"), path)
        os.chmod(path, 0o644)
        db = sqlite3.connect(path)
        # The schema, minus tables the importer never reads, keeps the seed small.
        read = ("StringIds", "EXPORT_META_DATA", "META_DATA_EXPORT", "TARGET_INFO", "PROCESSES", "ThreadNames",
                "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND", "MPI_RANKS")
        for (t,) in list(db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")):
            if not t.startswith(read):
                db.execute(f'DROP TABLE "{t}"')
        db.commit()
        db.close()
        shrink(path, 12)
        with open(path, "rb") as f:
            write(os.path.join(CORPUS, "nsys", "saxpy_cut.sqlite.seed"), b"\x00" + f.read())
    finally:
        shutil.rmtree(work)
    sql = {
        "kernel_times": "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9223372036854775807 WHERE rowid = 1;",
        "view_for_table": "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k; CREATE VIEW "
        "CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM k;",
        "mpi_rank": "UPDATE MPI_RANKS SET rank = 4294967296;",
        "strings_only": "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME; "
        "DROP TABLE NVTX_EVENTS; DROP TABLE META_DATA_EXPORT;",
        "nvtx_nesting": "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES "
        "(150, 950, 59, 'outer', 281474993487873, 0), (160, 170, 60, 'ncclSend', 281474993487873, 1);",
    }
    for name, text in sql.items():
        write(os.path.join(CORPUS, "nsys", name + ".sql.seed"), b"\x01" + text.encode())


def profile_seeds(meshscope):
    work = tempfile.mkdtemp()
    try:
        trace = os.path.join(CORPUS, "kineto", "nccl_collectives.json")
        path = os.path.join(work, "p.msdb")
        subprocess.run([meshscope, "import", "-q", trace, "-o", path], check=True)
        shrink(path, 1000000)
        with open(path, "rb") as f:
            write(os.path.join(CORPUS, "profile", "nccl_collectives.msdb.seed"), b"\x00" + f.read())
    finally:
        shutil.rmtree(work)
    sql = {
        "string_id": "UPDATE strings SET id = -1 WHERE id = 1;",
        "name_id": "UPDATE activities SET name = 123456789 WHERE id = 2;",
        "depth": "UPDATE ranges SET depth = 2147483647 WHERE id = 3;",
        "times": "UPDATE activities SET end_ns = 9223372036854775807 WHERE id = 1;",
        "view": "ALTER TABLE activities RENAME TO a; CREATE VIEW activities AS SELECT * FROM a;",
        "kind": "UPDATE activities SET kind = 9 WHERE id = 4; UPDATE ranges SET kind = 0 WHERE id = 2;",
        "newer_schema": "ALTER TABLE activities ADD COLUMN power INTEGER; DROP VIEW activity_names; "
        "ALTER TABLE activities DROP COLUMN graph_id; UPDATE meta SET value = '9' WHERE key = 'schema_version';",
        "collective": "UPDATE collectives SET group_size = 0, in_bytes = -1, activity_id = NULL WHERE id = 1;",
    }
    for name, text in sql.items():
        write(os.path.join(CORPUS, "profile", name + ".sql.seed"), b"\x01" + text.encode())


def merge_seeds():
    scripts = {
        "unchanged": [b"", b"", b""],
        "strings_shifted": [b"UPDATE strings SET id = id + 100;", b"", b"DELETE FROM strings WHERE value = 'send';"],
        "times": [b"UPDATE activities SET start_ns = 9223372036854775000;", b"UPDATE collectives SET end_ns = 0;", b""],
        "ranks": [b"UPDATE ranks SET rank = 1;", b"UPDATE ranks SET rank = -3;",
                  b"UPDATE process_groups SET ranks_json = '[0, -7, x]';"],
        "view": [b"ALTER TABLE ranges RENAME TO r; CREATE VIEW ranges AS SELECT * FROM r;", b"", b""],
    }
    for name, parts in scripts.items():
        write(os.path.join(CORPUS, "merge", name + ".seed"), b"\x01".join(parts))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    shutil.rmtree(CORPUS, ignore_errors=True)
    kineto_seeds()
    nsys_seeds()
    profile_seeds(sys.argv[1])
    merge_seeds()
    for root, _, files in sorted(os.walk(CORPUS)):
        total = sum(os.path.getsize(os.path.join(root, f)) for f in files)
        if files:
            print(f"{os.path.relpath(root, HERE)}: {len(files)} seeds, {total} bytes")


if __name__ == "__main__":
    main()
