#!/usr/bin/env python3
"""Cuts NeuSight's measured training steps (github.com/sitar-lab/NeuSight, MIT licence, commit 6945927,
scripts/asplos/label/GPU/MODEL-train-SEQ-BATCH.{csv,json}) into the small tables tests/compare/batch_edit_test.cpp
reads: per operator of the traced model (torch.fx), whether it is a GEMM, how many kernels it runs (forward, and
with a backward its two gradients), how many times the model runs it (the layers, for the first block's
operators) and its measured forward + backward latency (and each apart); the step's measured end-to-end latency
in a header, with, where NeuSight measured them on four GPUs of the same kind, the data-parallel (4x the global
batch), tensor-parallel and pipelined (one micro-batch) steps of the same model.
Each operator also names the ATen operator PyTorch runs for it, with its inputs' sizes and element types as
Kineto records them ("Input Dims", "Input type"), so that meshscope's own formulas (analysis/measure/op_work)
count its FLOPs and bytes; "-" for what launches no kernel (views, sizes, Python arithmetic on sizes).

Usage: convert.py NEUSIGHT_CHECKOUT_OR_MIRROR OUT_DIR   (reads the files with `git show HEAD:PATH` from a bare
mirror, or directly from a checkout)
"""
import csv, io, json, os, re, subprocess, sys

PAIRS = [("bert_large-train-512", (2, 8)), ("gpt2_large-train-1024", (1, 4)), ("opt_13-train-2048", (1, 2)),
         ("gpt3_xl-train-2048", (1,)), ("gpt3_27-train-2048", (1,))]
GPUS = ["NVIDIA_H100_80GB_HBM3", "NVIDIA_A100_80GB_PCIe", "Tesla_V100-PCIE-32GB", "NVIDIA_L4", "AMD_Instinct_MI210",
        "AMD_Instinct_MI250"]
GEMM_FUNCTION = re.compile(r"addmm|matmul|\bmm\b|bmm|baddbmm|linear")
LINEAR_MODULE = re.compile(r"lm_head|dense|query|key|value|fc|proj|c_attn|c_fc|c_proj|classifier|pooler")
HEAD_MODULE = re.compile(r"^cls\.(predictions\.decoder|seq_relationship)$")  # BERT's pre-training heads
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
        if HEAD_MODULE.search(row["target"]):
            return True
        return bool(LINEAR_MODULE.search(text)) and not NOT_LINEAR.search(text)
    return bool(GEMM_FUNCTION.search(row["target"]))


# What launches no kernel: views and shape queries, and Python arithmetic on sizes (no element type).
VIEWS = {"view", "permute", "transpose", "unsqueeze", "expand", "size", "dim", "split", "type", "type_as",
         "getitem", "getattr", "finfo"}
EMBEDDING = re.compile(r"emb|wte|wpe", re.I)
NORM = re.compile(r"norm|\bln|ln_", re.I)
DROPOUT = re.compile(r"drop", re.I)
FUNCTIONS = {"contiguous": "clone", "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "pow": "pow", "tanh": "tanh",
             "gelu": "gelu", "softmax": "softmax", "matmul": "matmul", "bmm": "bmm", "addmm": "addmm",
             "baddbmm": "baddbmm", "max": "maximum", "where": "where", "embedding": "embedding",
             "relu": "relu", "dropout": "dropout"}
TORCH_TYPES = {"torch.float32": "float", "torch.float16": "c10::Half", "torch.bfloat16": "c10::BFloat16",
               "torch.int64": "long int", "torch.bool": "bool"}


def callee(row):
    """The function or method a node calls: 'addmm' for '<built-in method addmm of type object at 0x..>'."""
    target = row["target"]
    m = re.match(r"<(?:built-in (?:method|function)|function) (\w+)", target) or re.match(r"<class '[\w.]*?(\w+)'>",
                                                                                          target)
    return m.group(1) if m else target


def lists(text):
    return json.loads(text) if text else []


def aten(row, gemm):
    """(ATen operator, Input Dims, Input type) of one node, as Kineto would record them; '-' for no kernel."""
    element = TORCH_TYPES.get(row["dtype"], "")
    if not element or row["op"] in ("placeholder", "get_attr", "output"):
        return "-", "", ""
    shapes = lists(row["input_shapes"])
    out = [int(x) for x in re.findall(r"-?\d+", row["output_shape"])]
    name = row["target"] if row["op"] == "call_module" else callee(row)
    if row["op"] == "call_module":
        if gemm:  # nn.Linear (or GPT-2's Conv1D): input [.., K], weight [N, K], bias [N]
            k, n = shapes[0][-1], out[-1]
            return "aten::linear", json.dumps([shapes[0], [n, k], [n]]), json.dumps([element] * 3)
        if NORM.search(name):  # (input, normalized_shape, weight, bias, eps, cudnn_enable)
            d = shapes[0][-1]
            return ("aten::layer_norm", json.dumps([shapes[0], [], [d], [d], [], []]),
                    json.dumps([element, "", element, element, "Scalar", "Scalar"]))
        if DROPOUT.search(name):
            name = "dropout"
        elif EMBEDDING.search(name):  # the table's rows are not recorded; the formula reads its width only
            return "aten::embedding", json.dumps([[0, out[-1]], shapes[0]]), json.dumps([element, "long int"])
        elif re.search(r"act", name, re.I):  # BERT's pooler: nn.Tanh; OPT's activation_fn: nn.ReLU
            name = "tanh" if "pooler" in name else "relu"
    if name in VIEWS:
        return "-", "", ""
    op = FUNCTIONS.get(name)
    if op is None:  # a kernel with no formula here (arange, full, cumsum, comparisons, copies and casts)
        return "aten::" + name, json.dumps(shapes), json.dumps([element] * len(shapes))
    if op == "dropout":  # the input times its mask: a stand-in with dropout's element-wise traffic
        return "aten::mul", json.dumps([shapes[0], shapes[0]]), json.dumps([element, element])
    if op == "where":  # (condition, self, other)
        return "aten::where", json.dumps(shapes), json.dumps(["bool"] + [element] * (len(shapes) - 1))
    if op == "embedding":  # F.embedding(input, weight) -> aten::embedding(weight, indices)
        return "aten::embedding", json.dumps([shapes[1], shapes[0]]), json.dumps([element, "long int"])
    if op == "softmax":
        return "aten::softmax", json.dumps([shapes[0], []]), json.dumps([element, "Scalar"])
    if op in ("add", "sub", "mul", "div", "pow", "maximum") and len(shapes) < 2:  # a Python number operand
        return "aten::" + op, json.dumps(shapes + [[]]), json.dumps([element] * len(shapes) + ["Scalar"])
    return "aten::" + op, json.dumps(shapes), json.dumps([element] * len(shapes))


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
                         f"step_ms\t{e2e['e2e_latency']:.6f}"]
                # The same model on four GPUs of that kind, each running this batch: data-parallel at 4x the
                # global batch, tensor-parallel and pipelined (one micro-batch) at this one.
                for key, label in (("dp4", f"{base}-{4 * batch}-dp4"), ("tp4", f"{base}-{batch}-tp4"),
                                   ("pp4_1", f"{base}-{batch}-pp4_1")):
                    multi = read(root, f"scripts/asplos/label/{gpu}/{label}.json")
                    if multi is not None:
                        lines.append(f"{key}_step_ms\t{json.loads(multi)['e2e_latency']:.6f}")
                lines.append("gemm\tkernels\ttimes\tlatency_ms\taten\tinput_dims\tinput_types\tforward_ms\tbackward_ms")
                for row in csv.DictReader(io.StringIO(table)):
                    latency = float(row["fw_latency"]) + float(row["bw_latency"])
                    if latency <= 0:
                        continue
                    gemm = is_gemm(row)
                    backward = float(row["bw_latency"]) > 0
                    kernels = (3 if gemm else 2) if backward else 1
                    times = e2e["num_layer"] if BLOCK.search(row["meta"]) else 1
                    op, dims, types = aten(row, gemm)
                    lines.append(f"{int(gemm)}\t{kernels}\t{times}\t{latency:.6f}\t{op}\t{dims}\t{types}\t"
                                 f"{float(row['fw_latency']):.6f}\t{float(row['bw_latency']):.6f}")
                os.makedirs(os.path.join(out, gpu), exist_ok=True)
                with open(os.path.join(out, gpu, f"{base}-{batch}.tsv"), "w") as f:
                    f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
