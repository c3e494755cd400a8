#!/usr/bin/env python3
"""Cuts NeuSight's measured training steps (github.com/sitar-lab/NeuSight, MIT licence, commit 6945927,
scripts/asplos/label/GPU/MODEL-train-SEQ-BATCH.{csv,json}) into the small tables tests/compare/batch_edit_test.cpp
reads: per operator of the traced model (torch.fx), whether it is a GEMM, how many kernels it runs (forward, and
with a backward its two gradients), how many times the model runs it (the layers, for the first block's
operators) and its measured forward + backward latency; the step's measured end-to-end latency in a header.

Usage: convert.py NEUSIGHT_CHECKOUT_OR_MIRROR OUT_DIR   (reads the files with `git show HEAD:PATH` from a bare
mirror, or directly from a checkout)
"""
import csv, io, json, os, re, subprocess, sys

PAIRS = [("bert_large-train-512", (2, 8)), ("gpt2_large-train-1024", (1, 4)), ("opt_13-train-2048", (1, 2))]
GPUS = ["NVIDIA_H100_80GB_HBM3", "NVIDIA_A100_80GB_PCIe", "Tesla_V100-PCIE-32GB", "NVIDIA_L4"]
GEMM_FUNCTION = re.compile(r"addmm|matmul|\bmm\b|bmm|baddbmm|linear")
LINEAR_MODULE = re.compile(r"lm_head|dense|query|key|value|fc|proj|c_attn|c_fc|c_proj|classifier|pooler")
NOT_LINEAR = re.compile(r"drop|norm|ln|emb|act", re.I)
BLOCK = re.compile(r"\.(h|layer|layers|block|blocks)\.0'")


def read(root, path):
    if os.path.isdir(os.path.join(root, "objects")) or root.endswith(".git") or os.path.basename(root) == "repo":
        try:
            return subprocess.run(["git", "--git-dir", root, "show", "HEAD:" + path], check=True,
                                  capture_output=True, text=True).stdout
        except subprocess.CalledProcessError:
            return None
    full = os.path.join(root, path)
    return open(full).read() if os.path.exists(full) else None


def is_gemm(row):
    if row["op"] == "call_module":
        text = row["target"] + " " + row["Name"]
        return bool(LINEAR_MODULE.search(text)) and not NOT_LINEAR.search(text)
    return bool(GEMM_FUNCTION.search(row["target"]))


def main():
    root, out = sys.argv[1], sys.argv[2]
    for gpu in GPUS:
        for base, batches in PAIRS:
            for batch in batches:
                path = f"scripts/asplos/label/{gpu}/{base}-{batch}"
                table, meta = read(root, path + ".csv"), read(root, path + ".json")
                if table is None or meta is None:
                    continue
                e2e = json.loads(meta)
                lines = [f"# {gpu} {base} batch {batch}: measured step {e2e['e2e_latency']:.6f} ms, "
                         f"{e2e['num_layer']} layers (NeuSight {path})",
                         f"step_ms\t{e2e['e2e_latency']:.6f}",
                         "gemm\tkernels\ttimes\tlatency_ms"]
                for row in csv.DictReader(io.StringIO(table)):
                    latency = float(row["fw_latency"]) + float(row["bw_latency"])
                    if latency <= 0:
                        continue
                    gemm = is_gemm(row)
                    backward = float(row["bw_latency"]) > 0
                    kernels = (3 if gemm else 2) if backward else 1
                    times = e2e["num_layer"] if BLOCK.search(row["meta"]) else 1
                    lines.append(f"{int(gemm)}\t{kernels}\t{times}\t{latency:.6f}")
                os.makedirs(os.path.join(out, gpu), exist_ok=True)
                with open(os.path.join(out, gpu, f"{base}-{batch}.tsv"), "w") as f:
                    f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
