#!/usr/bin/python3
"""Records real traces (PyTorch profiler, CPU, shapes recorded) of small models whose configuration is known,
so that what meshscope infers from a trace can be checked against the truth (tests/compare/known_models_test.cpp,
docs/COMPARE.md "What the profile ran").

  /usr/bin/python3 tests/data/record_known_models.py OUT_DIR [NAME ...]

Needs Debian's python3-torch (1.13, CPU: `apt-get install python3-torch`); the tests read the traces it wrote into
tests/data/known_models/ and need no torch. Every model is built with random weights from a fixed seed, run once
unprofiled (warm-up), then profiled for one step: a training step (forward, backward, AdamW) or a forward pass under
no_grad (inference). The models' configurations are written beside the folder (OUT_DIR.json) so that a test compares
the inference with what was built, not with numbers copied by hand.

The models cover the ways the operators of attention, MLPs, experts and inputs are recorded:
  llama_gqa_train     decoder, grouped-query attention computed eagerly (matmul + softmax, keys repeated), SwiGLU
  llama_gqa_prefill   the same model, a forward pass under no_grad (inference)
  llama_gqa_generate  the same model generating: a prefill, then three one-token passes with keys and values cached
  llama_tp2_dp2_train the same model sharded as Megatron-LM does over TP 2, on 4 ranks (DP 2), a training step each
                      (a folder of four traces, gloo on the CPU)
  gpt2_conv1d_train   decoder whose projections are addmm over [in, out] weights (Hugging Face's GPT-2 Conv1D)
  bert_train          encoder of nn.TransformerEncoderLayer (packed in-projection, bmm over batch × heads), word,
                      position and token-type tables
  bert_infer          the same encoder under no_grad in eval mode (PyTorch's fused encoder-layer fast path)
  vit_train           vision transformer: a patch-embedding convolution, no token embedding, a classifier head
  moe_train           decoder with a top-2 router over 8 experts, each expert a gated MLP run on its tokens
  t5_like_train       encoder-decoder (nn.Transformer): self-attention, cross-attention, a shared vocabulary
  two_model_infer     a small text encoder whose output conditions a larger decoder, one forward pass each
  llama_vllm_prefill  the Llama-like decoder as vLLM serves it: four prompts packed into 256 tokens, attention by
                      vllm::unified_attention_with_output (no sequence offsets among its inputs), logits of each
                      prompt's last token
  llama_vllm_generate the same as vLLM serves it generating: a prefill of two prompts, then three decoding passes
                      of one token per sequence (the output layer on one row per sequence in every pass)
  llama_flash_varlen_train  the same, trained padding-free: two sequences packed, flash-attn's variable-length
                      forward and backward operators (sequence offsets cu_seqlens among their inputs)
  llama_flashinfer_generate  the same as sglang serves it with FlashInfer: a ragged prefill of two prompts, then
                      three decoding passes over a paged key/value cache (pages of one token)
  qwen3_head_dim_prefill  the Llama-like decoder with a head size of its own (64: 8 heads × 64 = 512, twice the
                      hidden size), as Qwen3 and Gemma are built, a forward pass
  deepseek_mla_train  the decoder with DeepSeek-V2/V3's multi-head latent attention (low-rank queries, a compressed
                      key/value latent, query/key heads of 32 + 16 rotary, value heads of 32), eager, trained
  llama_mm_prefill    the Llama-like decoder as torch.compile's generated code runs it: every projection one aten::mm
                      of the tokens by the weight's transpose, no aten::linear, a forward pass
  llama_mm_train      the same trained: the backward's products by the weights and by the tokens are aten::mm too
  llama_user_attention_prefill  the Llama-like decoder whose attention is a user's own operator (a stand-in named
                      mylab::fused_attention_fwd, as a Triton kernel is wrapped with torch.library), a forward pass
The serving and variable-length attention operators are stand-ins registered under the libraries' own names and
signatures (see "Serving and variable-length attention" below).
"""
import gzip
import itertools
import json
import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class EagerGqaAttention(nn.Module):
    """Hugging Face Llama's eager attention: keys and values repeated to every head, QK^T as a 4-D matmul."""

    def __init__(self, hidden, heads, kv_heads, head_dim=None, linear=nn.Linear):
        super().__init__()
        # A head size of its own (Qwen3, Gemma): heads × head size is not the hidden size.
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim or hidden // heads
        self.q_proj = linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x, cache=None):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if cache is not None:  # decoding: the keys and values of the tokens before, kept from pass to pass
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        repeat = self.heads // self.kv_heads
        k = k.repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        past = k.shape[2] - s
        mask = torch.full((s, s + past), float("-inf")).triu(1 + past)
        probs = F.softmax(scores + mask, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(out)


class MatrixProduct(nn.Module):
    """A projection as torch.compile's generated code runs it: one aten::mm of the tokens [tokens, in] by the
    weight's transpose [in, out] (Inductor passes the weight as a transposed view; no aten::linear is recorded)."""

    def __init__(self, n_in, n_out, bias=False):
        super().__init__()
        assert not bias
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * n_in ** -0.5)

    def forward(self, x):
        return torch.mm(x.reshape(-1, x.shape[-1]), self.weight.t()).view(*x.shape[:-1], -1)


class MlaAttention(nn.Module):
    """DeepSeek-V2/V3's multi-head latent attention as Hugging Face's eager code runs it: queries through a
    low-rank projection (q_lora_rank), keys and values from one compressed latent (kv_lora_rank) plus a shared
    rotary key (qk_rope_dim), a query/key head of qk_nope_dim + qk_rope_dim and a value head of v_head_dim."""

    def __init__(self, c):
        super().__init__()
        h, m = c["hidden"], c["mla"]
        self.heads, self.nope, self.rope, self.v = c["heads"], m["qk_nope_dim"], m["qk_rope_dim"], m["v_head_dim"]
        self.kv_lora = m["kv_lora_rank"]
        qk = self.nope + self.rope
        self.q_a_proj = nn.Linear(h, m["q_lora_rank"], bias=False)
        self.q_a_norm = RMSNorm(m["q_lora_rank"])
        self.q_b_proj = nn.Linear(m["q_lora_rank"], self.heads * qk, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(h, self.kv_lora + self.rope, bias=False)
        self.kv_a_norm = RMSNorm(self.kv_lora)
        self.kv_b_proj = nn.Linear(self.kv_lora, self.heads * (self.nope + self.v), bias=False)
        self.o_proj = nn.Linear(self.heads * self.v, h, bias=False)

    def forward(self, x, cache=None):
        b, s, _ = x.shape
        q = self.q_b_proj(self.q_a_norm(self.q_a_proj(x))).view(b, s, self.heads, -1).transpose(1, 2)
        latent, k_pe = torch.split(self.kv_a_proj_with_mqa(x), [self.kv_lora, self.rope], dim=-1)
        kv = self.kv_b_proj(self.kv_a_norm(latent)).view(b, s, self.heads, -1).transpose(1, 2)
        k_nope, v = torch.split(kv, [self.nope, self.v], dim=-1)
        k_pe = k_pe.view(b, s, 1, self.rope).transpose(1, 2).expand(b, self.heads, s, self.rope)
        k = torch.cat([k_nope, k_pe], dim=-1)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.nope + self.rope)
        probs = F.softmax(scores + torch.full((s, s), float("-inf")).triu(1), dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(out)


class GatedMlp(nn.Module):
    def __init__(self, hidden, ffn, linear=nn.Linear):
        super().__init__()
        self.gate_proj = linear(hidden, ffn, bias=False)
        self.up_proj = linear(hidden, ffn, bias=False)
        self.down_proj = linear(ffn, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class TopKExperts(nn.Module):
    """A router [experts, hidden], softmax, top-k, and each expert (a gated MLP) run on the tokens routed to it."""

    def __init__(self, hidden, ffn, experts, top_k):
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(GatedMlp(hidden, ffn) for _ in range(experts))

    def forward(self, x):
        b, s, h = x.shape
        tokens = x.reshape(-1, h)
        weights = F.softmax(self.router(tokens), dim=-1)
        top_weights, chosen = torch.topk(weights, self.top_k, dim=-1)
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            rows, slot = torch.where(chosen == e)
            if rows.numel() == 0:
                continue
            y = expert(tokens[rows]) * top_weights[rows, slot].unsqueeze(-1)
            out = out.index_add(0, rows, y)
        return out.view(b, s, h)


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        linear = MatrixProduct if c.get("projections") == "mm" else nn.Linear
        self.input_norm = RMSNorm(c["hidden"])
        if "mla" in c:
            self.attn = MlaAttention(c)
        elif c.get("attention_op") == "user":
            register_stand_ins()
            self.attn = UserOpAttention(c["hidden"], c["heads"], c["kv_heads"])
        else:
            self.attn = EagerGqaAttention(c["hidden"], c["heads"], c["kv_heads"], c.get("head_dim"), linear)
        self.post_norm = RMSNorm(c["hidden"])
        if c.get("experts", 1) > 1:
            self.mlp = TopKExperts(c["hidden"], c["ffn"], c["experts"], c["top_k"])
        else:
            self.mlp = GatedMlp(c["hidden"], c["ffn"], linear)

    def forward(self, x, cache=None):
        x = x + self.attn(self.input_norm(x), cache)
        return x + self.mlp(self.post_norm(x))


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["hidden"])
        linear = MatrixProduct if c.get("projections") == "mm" else nn.Linear
        self.lm_head = linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, ids, prefix=None, caches=None):
        x = self.embed(ids)
        if prefix is not None:
            x = torch.cat([prefix, x], dim=1)
        for i, layer in enumerate(self.layers):
            x = layer(x, caches[i] if caches is not None else None)
        if caches is not None:  # generating: the next token's logits only
            x = x[:, -1:]
        return self.lm_head(self.norm(x))

    def generate(self, ids, new_tokens):
        """A prefill of IDS, then NEW_TOKENS decoding passes of one token each (greedy), keys and values cached."""
        caches = [{} for _ in self.layers]
        logits = self(ids, caches=caches)
        for _ in range(new_tokens):
            logits = self(logits.argmax(-1), caches=caches)
        return logits


# ---- Serving and variable-length attention --------------------------------------------------------------------
# The attention operators of vLLM, FlashAttention's variable-length interface and FlashInfer are registered here
# under their own names and with their own signatures (the tensors in the positions the libraries pass them), so
# the profiler records them as it records the real ones; their CPU bodies compute the same attention. The real
# operators run one GPU kernel and no ATen operator, so the trace keeps none of the ATen operators the stand-ins
# run inside (kineto_trace drops the events within a stand-in's on its thread).
STAND_INS = set()
_LIBRARIES = {}


def stand_in(namespace, schema, body):
    if namespace not in _LIBRARIES:
        _LIBRARIES[namespace] = torch.library.Library(namespace, "DEF")
    library = _LIBRARIES[namespace]
    name = schema.split("(")[0]
    library.define(schema)
    library.impl(name, body, "CPU")
    STAND_INS.add(f"{namespace}::{name}")
    return getattr(getattr(torch.ops, namespace), name)


def packed_attention(q, k, v, q_offsets, k_offsets):
    """Causal attention of each sequence packed in q [tokens, heads, d] over its keys [tokens, kv_heads, d]."""
    out = torch.empty_like(q)
    repeat = q.shape[1] // k.shape[1]
    for i in range(len(q_offsets) - 1):
        qs, qe, ks, ke = q_offsets[i], q_offsets[i + 1], k_offsets[i], k_offsets[i + 1]
        qi = q[qs:qe].transpose(0, 1)
        ki = k[ks:ke].repeat_interleave(repeat, dim=1).transpose(0, 1)
        vi = v[ks:ke].repeat_interleave(repeat, dim=1).transpose(0, 1)
        s, kv = qi.shape[1], ki.shape[1]
        mask = torch.full((s, kv), float("-inf")).triu(1 + kv - s)
        probs = F.softmax(qi @ ki.transpose(1, 2) / math.sqrt(q.shape[2]) + mask, dim=-1)
        out[qs:qe] = (probs @ vi).transpose(0, 1)
    return out


FORWARD_CONTEXT = {}  # vLLM's forward context: the pass's packed batch, set before each pass
VLLM_CACHES = {}  # per attention layer: its key and value cache [slots, kv_heads, d]


def _vllm_attention(query, key, value, output, layer_name):
    # As vLLM's attention does: the new keys and values stored in the layer's cache, the queries attending over
    # every cached token of their sequence.
    batch = FORWARD_CONTEXT["batch"]
    if layer_name not in VLLM_CACHES:
        VLLM_CACHES[layer_name] = (torch.zeros(2048, key.shape[1], key.shape[2]),
                                   torch.zeros(2048, value.shape[1], value.shape[2]))
    k_cache, v_cache = VLLM_CACHES[layer_name]
    new_slots = torch.tensor([s for seq in batch.new_slots for s in seq])
    k_cache[new_slots], v_cache[new_slots] = key, value
    slots = torch.tensor([s for seq in batch.slots for s in seq])
    k_offsets = [0] + list(itertools.accumulate(len(seq) for seq in batch.slots))
    output.copy_(packed_attention(query, k_cache[slots], v_cache[slots], batch.offsets, k_offsets))


def _varlen_forward(q, k, v, cu_q, cu_k, max_q, max_k, dropout_p, scale, causal, left, right, softcap, alibi,
                    return_softmax):
    out = packed_attention(q, k, v, cu_q.tolist(), cu_k.tolist())
    return out, torch.zeros(q.shape[1], q.shape[0])


def _varlen_backward(dout, q, k, v, out, lse, dq, dk, dv, cu_q, cu_k, max_q, max_k, dropout_p, scale, causal,
                     left, right, softcap, alibi, deterministic):
    with torch.enable_grad():
        qq, kk, vv = (t.detach().requires_grad_() for t in (q, k, v))
        grads = torch.autograd.grad(packed_attention(qq, kk, vv, cu_q.tolist(), cu_k.tolist()), (qq, kk, vv), dout)
    for target, grad in zip((dq, dk, dv), grads):
        target.copy_(grad)
    return torch.zeros(q.shape[1], q.shape[0])


FLASHINFER_URI = ("dtype_q_f32_dtype_kv_f32_dtype_o_f32_dtype_idx_i32_head_dim_qk_32_head_dim_vo_32_posenc_0_"
                  "use_swa_False_use_logits_cap_False")


def _flashinfer_ragged_run(float_ws, int_ws, plan, q, k, v, qo_indptr, kv_indptr, o, lse, mask_mode, layout,
                           window_left, enable_pdl):
    o.copy_(packed_attention(q, k, v, qo_indptr.tolist(), kv_indptr.tolist()))


def _flashinfer_decode_run(float_ws, int_ws, plan, q, k_cache, v_cache, kv_indptr, kv_indices, last_page_len, o,
                           lse, kv_layout, window_left, enable_pdl):
    # page size 1 (sglang's token pool): each page is one token's keys and values
    keys, values = k_cache[kv_indices.long(), 0], v_cache[kv_indices.long(), 0]
    o.copy_(packed_attention(q, keys, values, list(range(q.shape[0] + 1)), kv_indptr.tolist()))


def register_stand_ins():
    if STAND_INS:
        return
    stand_in("vllm", "unified_attention_with_output(Tensor query, Tensor key, Tensor value, Tensor(a!) output, "
             "str layer_name) -> ()", _vllm_attention)
    stand_in("flash_attn", "_flash_attn_varlen_forward(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, "
             "Tensor cu_seqlens_k, int max_seqlen_q, int max_seqlen_k, float dropout_p, float softmax_scale, "
             "bool causal, int window_size_left, int window_size_right, float softcap, Tensor? alibi_slopes, "
             "bool return_softmax) -> (Tensor, Tensor)", _varlen_forward)
    stand_in("flash_attn", "_flash_attn_varlen_backward(Tensor dout, Tensor q, Tensor k, Tensor v, Tensor out, "
             "Tensor softmax_lse, Tensor(a!) dq, Tensor(b!) dk, Tensor(c!) dv, Tensor cu_seqlens_q, "
             "Tensor cu_seqlens_k, int max_seqlen_q, int max_seqlen_k, float dropout_p, float softmax_scale, "
             "bool causal, int window_size_left, int window_size_right, float softcap, Tensor? alibi_slopes, "
             "bool deterministic) -> Tensor", _varlen_backward)
    stand_in("flashinfer", f"batch_prefill_with_kv_cache_{FLASHINFER_URI}_f16qk_False_ragged_run("
             "Tensor float_workspace_buffer, Tensor int_workspace_buffer, int[] plan_info_vec, Tensor q, Tensor k, "
             "Tensor v, Tensor qo_indptr, Tensor kv_indptr, Tensor(a!) o, Tensor? maybe_lse, int mask_mode, "
             "int layout, int window_left, bool enable_pdl) -> ()", _flashinfer_ragged_run)
    stand_in("flashinfer", f"batch_decode_with_kv_cache_{FLASHINFER_URI}_run(Tensor float_workspace_buffer, "
             "Tensor int_workspace_buffer, int[] plan_info_vec, Tensor q, Tensor? paged_k_cache, "
             "Tensor? paged_v_cache, Tensor paged_kv_indptr, Tensor paged_kv_indices, "
             "Tensor paged_kv_last_page_len, Tensor(a!) o, Tensor? maybe_lse, int kv_layout_code, "
             "int window_left, bool enable_pdl) -> ()", _flashinfer_decode_run)
    stand_in("mylab", "fused_attention_fwd(Tensor q, Tensor k, Tensor v, float sm_scale, bool causal) -> Tensor",
             _user_attention)


def _user_attention(q, k, v, sm_scale, causal):
    """Attention over q [batch, heads, seq, d] and k, v [batch, kv_heads, kv_seq, d], grouped heads shared as a Triton
    kernel shares them (the keys are never repeated in memory)."""
    repeat = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
    scores = q @ k.transpose(2, 3) * sm_scale
    if causal:
        scores = scores + torch.full(scores.shape[-2:], float("-inf")).triu(1 + k.shape[2] - q.shape[2])
    return F.softmax(scores, dim=-1) @ v


class UserOpAttention(EagerGqaAttention):
    """Attention by a user's own operator, as a Triton kernel is wrapped for PyTorch (torch.library.custom_op): a name
    of the user's choosing, the tensors q, k, v first, [batch, heads, seq, head] as the Triton tutorial's fused
    attention takes them."""

    def forward(self, x, cache=None):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        out = torch.ops.mylab.fused_attention_fwd(q, k, v, self.head_dim ** -0.5, True)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


class FlashAttnVarlenFunc(torch.autograd.Function):
    """flash-attn's autograd function over its registered forward and backward operators."""

    @staticmethod
    def forward(ctx, q, k, v, cu):
        out, lse = torch.ops.flash_attn._flash_attn_varlen_forward(
            q, k, v, cu, cu, int((cu[1:] - cu[:-1]).max()), int((cu[1:] - cu[:-1]).max()), 0.0,
            1 / math.sqrt(q.shape[2]), True, -1, 0, 0.0, None, False)
        ctx.save_for_backward(q, k, v, out, lse, cu)
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse, cu = ctx.saved_tensors
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        longest = int((cu[1:] - cu[:-1]).max())
        torch.ops.flash_attn._flash_attn_varlen_backward(
            dout.contiguous(), q, k, v, out, lse, dq, dk, dv, cu, cu, longest, longest, 0.0,
            1 / math.sqrt(q.shape[2]), True, -1, 0, 0.0, None, False)
        return dq, dk, dv, None


class PackedBatch:
    """What a serving engine knows of the tokens it runs in one pass: the sequences' offsets into the packed
    tokens, and (FlashInfer) the key/value cache slots each sequence holds."""

    def __init__(self, offsets, decoding=False):
        self.offsets = offsets
        self.decoding = decoding
        self.slots = []  # per sequence: its cache slots, in order


class ServedAttention(nn.Module):
    """A Llama attention as serving engines run it: one fused QKV projection over the packed tokens [tokens,
    hidden], the attention by BACKEND's operator, the output projection."""

    def __init__(self, c, index, backend):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c["heads"], c["kv_heads"], c["hidden"] // c["heads"]
        self.index, self.backend = index, backend
        self.qkv_proj = nn.Linear(c["hidden"], (self.heads + 2 * self.kv_heads) * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, c["hidden"], bias=False)
        self.k_cache = self.v_cache = None

    def forward(self, x, batch):
        d = self.head_dim
        q, k, v = self.qkv_proj(x).split([self.heads * d, self.kv_heads * d, self.kv_heads * d], dim=-1)
        q, k, v = q.view(-1, self.heads, d), k.view(-1, self.kv_heads, d), v.view(-1, self.kv_heads, d)
        if self.backend == "vllm":
            out = torch.empty_like(q)
            torch.ops.vllm.unified_attention_with_output(q, k, v, out, f"model.layers.{self.index}.self_attn.attn")
        elif self.backend == "flash_varlen":
            out = FlashAttnVarlenFunc.apply(q, k, v, torch.tensor(batch.offsets, dtype=torch.int32))
        else:
            out = self.flashinfer(q, k, v, batch)
        return self.o_proj(out.reshape(-1, self.heads * d))

    def flashinfer(self, q, k, v, batch):
        """sglang's FlashInfer backend: the new keys and values stored in a token pool (pages of one token), the
        prefill over the prompt's own keys (ragged), a decoding pass over each sequence's cached tokens (paged)."""
        if self.k_cache is None:
            self.k_cache = torch.zeros(512, 1, self.kv_heads, self.head_dim)
            self.v_cache = torch.zeros(512, 1, self.kv_heads, self.head_dim)
        new_slots = torch.tensor([s for seq in batch.new_slots for s in seq])
        self.k_cache[new_slots, 0] = k
        self.v_cache[new_slots, 0] = v
        workspace, int_workspace, plan = torch.empty(1024), torch.empty(256, dtype=torch.int32), [0, 1, 2]
        out = torch.empty_like(q)
        indptr = torch.tensor(batch.offsets, dtype=torch.int32)
        ops = torch.ops.flashinfer
        if not batch.decoding:
            getattr(ops, f"batch_prefill_with_kv_cache_{FLASHINFER_URI}_f16qk_False_ragged_run")(
                workspace, int_workspace, plan, q, k, v, indptr, indptr, out, None, 1, 0, -1, False)
            return out
        kv_indptr = torch.tensor([0] + list(itertools.accumulate(len(s) for s in batch.slots)), dtype=torch.int32)
        kv_indices = torch.tensor([s for seq in batch.slots for s in seq], dtype=torch.int32)
        last_page_len = torch.ones(len(batch.slots), dtype=torch.int32)
        getattr(ops, f"batch_decode_with_kv_cache_{FLASHINFER_URI}_run")(
            workspace, int_workspace, plan, q, self.k_cache, self.v_cache, kv_indptr, kv_indices, last_page_len,
            out, None, 0, -1, False)
        return out


class ServedDecoder(nn.Module):
    """The Llama-like decoder as a serving engine (or a padding-free trainer) runs it: the sequences' tokens packed
    into one dimension, a fused gate-and-up projection, and, when serving, logits of each sequence's last token
    only."""

    def __init__(self, c, backend):
        super().__init__()
        register_stand_ins()
        self.backend = backend
        self.embed = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList()
        for i in range(c["layers"]):
            layer = nn.Module()
            layer.input_norm, layer.post_norm = RMSNorm(c["hidden"]), RMSNorm(c["hidden"])
            layer.attn = ServedAttention(c, i, backend)
            layer.gate_up_proj = nn.Linear(c["hidden"], 2 * c["ffn"], bias=False)
            layer.down_proj = nn.Linear(c["ffn"], c["hidden"], bias=False)
            self.layers.append(layer)
        self.norm = RMSNorm(c["hidden"])
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, ids, batch, all_logits=False):
        FORWARD_CONTEXT["batch"] = batch
        x = self.embed(ids)
        for layer in self.layers:
            x = x + layer.attn(layer.input_norm(x), batch)
            gate, up = layer.gate_up_proj(layer.post_norm(x)).chunk(2, dim=-1)
            x = x + layer.down_proj(F.silu(gate) * up)
        if not all_logits:
            x = x[torch.tensor(batch.offsets[1:]) - 1]
        return self.lm_head(self.norm(x))

    def generate(self, prompts, new_tokens):
        """A prefill of the packed PROMPTS, then NEW_TOKENS decoding passes of one token per sequence."""
        lengths = [len(p) for p in prompts]
        batch = PackedBatch([0] + list(itertools.accumulate(lengths)))
        batch.slots = [list(range(i * 256, i * 256 + n)) for i, n in enumerate(lengths)]
        batch.new_slots = batch.slots
        logits = self(torch.cat(prompts), batch)
        for _ in range(new_tokens):
            step = PackedBatch(list(range(len(prompts) + 1)), decoding=True)
            step.new_slots = [[seq[-1] + 1] for seq in batch.slots]
            step.slots = batch.slots = [seq + new for seq, new in zip(batch.slots, step.new_slots)]
            logits = self(logits.argmax(-1), step)
        return logits


class Conv1D(nn.Module):
    """Hugging Face GPT-2's projection: addmm over a weight stored [in, out]."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        shape = x.shape[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


class Gpt2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.heads = c["heads"]
        self.ln_1, self.ln_2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.c_attn, self.c_proj = Conv1D(h, 3 * h), Conv1D(h, h)
        self.c_fc, self.mlp_proj = Conv1D(h, c["ffn"]), Conv1D(c["ffn"], h)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
        mask = torch.full((s, s), float("-inf")).triu(1)
        out = torch.matmul(F.softmax(scores + mask, dim=-1), v).transpose(1, 2).reshape(b, s, h)
        x = x + self.c_proj(out)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))


class Gpt2(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab"], c["hidden"])
        self.wpe = nn.Embedding(c["positions"], c["hidden"])
        self.blocks = nn.ModuleList(Gpt2Block(c) for _ in range(c["layers"]))
        self.ln_f = nn.LayerNorm(c["hidden"])

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)  # tied output layer


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.word = nn.Embedding(c["vocab"], h)
        self.position = nn.Embedding(c["positions"], h)
        self.token_type = nn.Embedding(2, h)
        self.norm = nn.LayerNorm(h)
        layer = nn.TransformerEncoderLayer(h, c["heads"], c["ffn"], dropout=0.0, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, c["layers"], enable_nested_tensor=False)
        self.mlm_head = nn.Linear(h, c["vocab"])

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0).expand_as(ids)
        x = self.word(ids) + self.position(positions) + self.token_type(torch.zeros_like(ids))
        return self.mlm_head(self.encoder(self.norm(x)))


class Vit(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.patch = nn.Conv2d(3, h, kernel_size=c["patch"], stride=c["patch"])
        patches = (c["image"] // c["patch"]) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, h))
        self.position = nn.Parameter(torch.randn(1, patches + 1, h) * 0.02)
        layer = nn.TransformerEncoderLayer(h, c["heads"], c["ffn"], dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, c["layers"], enable_nested_tensor=False)
        self.head = nn.Linear(h, c["classes"])

    def forward(self, images):
        x = self.patch(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        return self.head(self.encoder(x)[:, 0])


class T5Like(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.shared = nn.Embedding(c["vocab"], h)
        self.transformer = nn.Transformer(h, c["heads"], c["encoder_layers"], c["decoder_layers"], c["ffn"],
                                          dropout=0.0, batch_first=True)
        self.lm_head = nn.Linear(h, c["vocab"], bias=False)

    def forward(self, source, target):
        mask = self.transformer.generate_square_subsequent_mask(target.shape[1])
        out = self.transformer(self.shared(source), self.shared(target), tgt_mask=mask)
        return self.lm_head(out)


class TwoModels(nn.Module):
    """A text encoder (BERT-like) whose pooled output is projected into a larger decoder's first position."""

    def __init__(self, encoder, decoder):
        super().__init__()
        self.text_encoder = Bert(encoder)
        self.bridge = nn.Linear(encoder["vocab"], decoder["hidden"], bias=False)
        self.decoder = Decoder(decoder)

    def forward(self, prompt, ids):
        pooled = self.text_encoder(prompt).mean(dim=1, keepdim=True)
        return self.decoder(ids, prefix=self.bridge(pooled))


class _CopyToTensorParallel(torch.autograd.Function):
    """Megatron's f: the input as it is, its gradient summed over the tensor-parallel group."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromTensorParallel(torch.autograd.Function):
    """Megatron's g: the partial outputs summed over the tensor-parallel group, the gradient as it is."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.clone()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class TensorParallelDecoder(nn.Module):
    """The Llama-like decoder sharded as Megatron-LM shards it over TP ranks: a vocabulary-parallel embedding and
    output layer, column-parallel q/k/v and gate/up projections (heads and ffn split), row-parallel o and down
    projections whose partial outputs are summed."""

    def __init__(self, c, tp, tp_rank, group):
        super().__init__()
        self.c, self.tp, self.group = c, tp, group
        h, d = c["hidden"], c["hidden"] // c["heads"]
        self.rows = c["vocab"] // tp
        self.first_row = tp_rank * self.rows
        self.embed = nn.Parameter(torch.randn(self.rows, h) * 0.02)
        self.layers = nn.ModuleList()
        for _ in range(c["layers"]):
            layer = nn.Module()
            layer.input_norm, layer.post_norm = RMSNorm(h), RMSNorm(h)
            layer.attn = EagerGqaAttention(h, c["heads"], c["kv_heads"])
            heads, kv = c["heads"] // tp, c["kv_heads"] // tp
            layer.attn.heads, layer.attn.kv_heads = heads, kv
            layer.attn.q_proj = nn.Linear(h, heads * d, bias=False)
            layer.attn.k_proj = nn.Linear(h, kv * d, bias=False)
            layer.attn.v_proj = nn.Linear(h, kv * d, bias=False)
            layer.attn.o_proj = nn.Linear(heads * d, h, bias=False)
            layer.mlp = GatedMlp(h, c["ffn"] // tp)
            self.layers.append(layer)
        self.norm = RMSNorm(h)
        self.lm_head = nn.Linear(h, self.rows, bias=False)

    def forward(self, ids):
        outside = (ids < self.first_row) | (ids >= self.first_row + self.rows)
        local = (ids - self.first_row).masked_fill(outside, 0)
        x = F.embedding(local, self.embed).masked_fill(outside.unsqueeze(-1), 0.0)
        x = _ReduceFromTensorParallel.apply(x, self.group)
        for layer in self.layers:
            a = layer.attn(_CopyToTensorParallel.apply(layer.input_norm(x), self.group))
            x = x + _ReduceFromTensorParallel.apply(a, self.group)
            m = layer.mlp(_CopyToTensorParallel.apply(layer.post_norm(x), self.group))
            x = x + _ReduceFromTensorParallel.apply(m, self.group)
        return self.lm_head(_CopyToTensorParallel.apply(self.norm(x), self.group))


LLAMA = dict(family="llama", hidden=256, layers=4, heads=8, kv_heads=2, ffn=704, gated_mlp=True, vocab=2048,
             batch=2, seq=128)
CONFIGS = {
    "llama_gqa_train": dict(LLAMA, mode="training"),
    "llama_gqa_prefill": dict(LLAMA, mode="inference", batch=4),
    "llama_gqa_generate": dict(LLAMA, mode="inference", batch=2, seq=96, new_tokens=3),
    "llama_tp2_dp2_train": dict(LLAMA, mode="training", tp=2, dp=2, batch=2, seq=64),
    "gpt2_conv1d_train": dict(family="gpt2", hidden=192, layers=3, heads=6, kv_heads=6, ffn=768, gated_mlp=False,
                              vocab=1500, positions=256, batch=2, seq=96, mode="training"),
    "bert_train": dict(family="bert", hidden=256, layers=4, heads=4, kv_heads=4, ffn=1024, gated_mlp=False,
                       vocab=3000, positions=512, batch=4, seq=64, mode="training"),
    "bert_infer": dict(family="bert", hidden=256, layers=4, heads=4, kv_heads=4, ffn=1024, gated_mlp=False,
                       vocab=3000, positions=512, batch=8, seq=64, mode="inference"),
    "vit_train": dict(family="vit", hidden=192, layers=4, heads=3, kv_heads=3, ffn=768, gated_mlp=False,
                      image=64, patch=8, classes=100, batch=4, seq=65, mode="training"),
    "moe_train": dict(LLAMA, family="moe", layers=3, heads=8, kv_heads=4, ffn=384, experts=8, top_k=2, batch=2,
                      seq=64, mode="training"),
    "t5_like_train": dict(family="t5", hidden=256, heads=4, kv_heads=4, encoder_layers=3, decoder_layers=3,
                          ffn=1024, gated_mlp=False, vocab=3000, batch=2, source_seq=96, seq=64, mode="training"),
    "llama_vllm_prefill": dict(LLAMA, mode="inference", batch=4, seq=64, attention="vllm"),
    "llama_vllm_generate": dict(LLAMA, mode="inference", batch=2, seq=96, new_tokens=3, attention="vllm"),
    "llama_flash_varlen_train": dict(LLAMA, mode="training", batch=2, seq=128, attention="flash_varlen"),
    "llama_flashinfer_generate": dict(LLAMA, mode="inference", batch=2, seq=96, new_tokens=3,
                                      attention="flashinfer"),
    "qwen3_head_dim_prefill": dict(LLAMA, mode="inference", batch=2, seq=96, head_dim=64),
    "deepseek_mla_train": dict(LLAMA, mode="training", batch=2, seq=64, heads=8, kv_heads=8,
                               mla=dict(q_lora_rank=96, kv_lora_rank=64, qk_nope_dim=32, qk_rope_dim=16,
                                        v_head_dim=32)),
    "llama_mm_prefill": dict(LLAMA, mode="inference", batch=2, seq=96, projections="mm"),
    "llama_mm_train": dict(LLAMA, mode="training", batch=2, seq=64, projections="mm"),
    "llama_user_attention_prefill": dict(LLAMA, mode="inference", batch=2, seq=96, attention_op="user"),
    "two_model_infer": dict(family="pipeline", mode="inference", batch=2, prompt_seq=32, seq=96,
                            encoder=dict(hidden=128, layers=2, heads=2, kv_heads=2, ffn=512, vocab=1000,
                                         positions=128),
                            decoder=dict(LLAMA, hidden=384, layers=6, heads=6, kv_heads=2, ffn=1024, vocab=4096)),
}


def build(name, c):
    """The model and a function running one step of it (forward, and backward and an optimizer step when
    training)."""
    g = torch.Generator().manual_seed(0)
    b = c["batch"]

    def ids(vocab, seq):
        return torch.randint(vocab, (b, seq), generator=g)

    if "attention" in c:
        return served_step(c, ids)
    if c["family"] in ("llama", "moe") and "new_tokens" in c:
        model = Decoder(c)
        model.eval()
        prompt = ids(c["vocab"], c["seq"])

        def step():
            with torch.no_grad():
                model.generate(prompt, c["new_tokens"])
        return step
    if c["family"] in ("llama", "moe"):
        model, inputs = Decoder(c), (ids(c["vocab"], c["seq"]),)
    elif c["family"] == "gpt2":
        model, inputs = Gpt2(c), (ids(c["vocab"], c["seq"]),)
    elif c["family"] == "bert":
        model, inputs = Bert(c), (ids(c["vocab"], c["seq"]),)
    elif c["family"] == "vit":
        model, inputs = Vit(c), (torch.randn(b, 3, c["image"], c["image"], generator=g),)
    elif c["family"] == "t5":
        model, inputs = T5Like(c), (ids(c["vocab"], c["source_seq"]), ids(c["vocab"], c["seq"]))
    else:
        model = TwoModels(c["encoder"], c["decoder"])
        inputs = (ids(c["encoder"]["vocab"], c["prompt_seq"]), ids(c["decoder"]["vocab"], c["seq"]))

    if c["mode"] == "inference":
        model.eval()

        def step():
            with torch.no_grad():
                model(*inputs)
        return step

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        out = model(*inputs)
        loss = out.float().pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return step


def served_step(c, ids):
    """One step of the served (or padding-free) decoder: the batch's sequences packed into one dimension."""
    model = ServedDecoder(c, c["attention"])
    prompts = list(ids(c["vocab"], c["seq"]))
    batch = PackedBatch([i * c["seq"] for i in range(c["batch"] + 1)])
    batch.slots = batch.new_slots = [list(range(i * 256, i * 256 + c["seq"])) for i in range(c["batch"])]
    if c["mode"] == "training":
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            model(torch.cat(prompts), batch, all_logits=True).float().pow(2).mean().backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        return step
    model.eval()

    def step():
        with torch.no_grad():
            if "new_tokens" in c:
                for layer in model.layers:
                    layer.attn.k_cache = None
                VLLM_CACHES.clear()
                model.generate(prompts, c["new_tokens"])
            else:
                model(torch.cat(prompts), batch)
    return step


def kineto_trace(prof, step_name):
    """The profiler's recorded events in Kineto's Chrome-trace format. Debian's PyTorch 1.13 is built without Kineto:
    its own export writes a legacy trace without shapes, so the events it recorded (names, threads, times, input
    shapes, autograd sequence numbers) are written here as Kineto would write them. Nothing is added that was not
    recorded: no input types (this profiler does not record them), no devices."""
    events = []
    inside = {}  # thread -> the time ranges of stand-in operators, whose own ATen operators are dropped
    for e in prof.events():
        if e.name in STAND_INS:
            inside.setdefault(e.thread, []).append((e.time_range.start, e.time_range.end))
    for e in prof.events():
        start, end = e.time_range.start, e.time_range.end
        if e.name not in STAND_INS and any(s <= start and end <= f for s, f in inside.get(e.thread, [])):
            continue
        # The profiler lists the step's record_function as "ProfilerStep*"; Kineto writes the name it was given.
        name = step_name if e.name == "ProfilerStep*" else e.name
        user = name == step_name or name.startswith("Optimizer.")
        args = {}
        if not user:
            args["Input Dims"] = e.input_shapes
            if e.sequence_nr >= 0:
                args["Sequence number"] = e.sequence_nr
                args["Fwd thread id"] = e.fwd_thread
        events.append({"ph": "X", "cat": "user_annotation" if user else "cpu_op", "name": name,
                       "pid": 1, "tid": e.thread, "ts": start, "dur": end - start, "args": args})
    events.sort(key=lambda e: (e["ts"], -e["dur"]))
    return {"schemaVersion": 1, "traceName": step_name, "displayTimeUnit": "ms", "traceEvents": events}


def record_ranks(rank, name, out_dir, port):
    """One rank of a TP × DP job (gloo on the CPU): TP groups of consecutive ranks, DP groups across them; the
    gradients summed over the DP group as DDP does. Writes NAME/rank-RANK.json.gz with the distributedInfo that
    Kineto writes (backend, rank, world size)."""
    c = CONFIGS[name]
    tp, dp = c["tp"], c["dp"]
    world = tp * dp
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.set_num_threads(1)
    tp_groups = [dist.new_group(list(range(g * tp, (g + 1) * tp))) for g in range(dp)]
    dp_groups = [dist.new_group(list(range(t, world, tp))) for t in range(tp)]
    tp_group, dp_group = tp_groups[rank // tp], dp_groups[rank % tp]
    torch.manual_seed(0)
    model = TensorParallelDecoder(c, tp, rank % tp, tp_group)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(c["vocab"], (c["batch"], c["seq"]), generator=torch.Generator().manual_seed(rank // tp))

    def step():
        model(ids).float().pow(2).mean().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad, group=dp_group)
            p.grad /= dp
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()
    step_name = "ProfilerStep#1"
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function(step_name):
            step()
    trace = kineto_trace(prof, step_name)
    trace["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": world}
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"rank-{rank}.json.gz"), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as z:
            z.write(json.dumps(trace, separators=(",", ":")).encode())
    dist.barrier()
    dist.destroy_process_group()


def record(name, out_dir):
    if "tp" in CONFIGS[name]:
        c = CONFIGS[name]
        torch.multiprocessing.spawn(record_ranks, args=(name, out_dir, 29400 + os.getpid() % 500),
                                    nprocs=c["tp"] * c["dp"])
        return
    torch.manual_seed(0)
    config = CONFIGS[name]
    step = build(name, config)
    step()  # warm-up: the optimizer's state, the allocator
    step_name = "ProfilerStep#1"
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function(step_name):
            step()
    text = json.dumps(kineto_trace(prof, step_name), separators=(",", ":")).encode()
    with open(os.path.join(out_dir, name + ".json.gz"), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as z:
            z.write(text)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    names = sys.argv[2:] or list(CONFIGS)
    for name in names:
        record(name, out_dir)
        path = os.path.join(out_dir, name)
        print(name, sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
              if os.path.isdir(path) else os.path.getsize(path + ".json.gz"), "bytes")
    # The configurations, beside the folder of traces (a .json among the traces would be read as one).
    truth = os.path.join(os.path.dirname(os.path.abspath(out_dir)), os.path.basename(out_dir) + ".json")
    known = {}
    if os.path.exists(truth):
        with open(truth) as f:
            known = json.load(f)
    known.update({name: dict(CONFIGS[name], torch=torch.__version__) for name in names})
    with open(truth, "w") as f:
        json.dump(known, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
