"""Generate a small real PyTorch-profiler trace of LLM inference on a GPU.

A tiny Llama-style model (random weights, bf16) serves two requests: one prefill step, a
mixed step (a new request's prefill next to decode), then decode steps. Each engine step is
wrapped in a vLLM-native style annotation (execute_context_<R>(<sq>)_generation_<R>(<sq>))
so stage splitting can be tested, and each step also runs one Triton kernel defined below so
source mapping has a user kernel to resolve.

Usage: python3 gen_trace.py OUT_DIR   (writes OUT_DIR/llama_tiny-rank-0.pt.trace.json.gz)
"""
import os
import sys

import torch
import triton
import triton.language as tl
from transformers import LlamaConfig, LlamaForCausalLM


@triton.jit
def residual_scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale, mask=mask)


def residual_scale(x, scale):
    out = torch.empty_like(x)
    n = x.numel()
    residual_scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, scale, BLOCK=1024)
    return out


def main(out_dir):
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=8192, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                      num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
    prompt_a = torch.randint(0, cfg.vocab_size, (2, 48), device="cuda")
    prompt_b = torch.randint(0, cfg.vocab_size, (1, 40), device="cuda")
    with torch.no_grad():  # warm-up outside the trace (cuBLAS handles, Triton JIT)
        model(prompt_a)
        residual_scale(torch.ones(4096, device="cuda"), 0.5)
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.no_grad(), torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        with torch.profiler.record_function("execute_context_2(96)_generation_0(0)"):
            out = model(prompt_a, use_cache=True)
            past = out.past_key_values
            tok = out.logits[:, -1:].argmax(-1)
            residual_scale(out.logits[:, -1], 0.5)
        with torch.profiler.record_function("execute_context_1(40)_generation_2(2)"):
            out_b = model(prompt_b, use_cache=True)
            out = model(tok, past_key_values=past, use_cache=True)
            past = out.past_key_values
            tok = out.logits[:, -1:].argmax(-1)
            residual_scale(out_b.logits[:, -1], 0.5)
        for _ in range(6):
            with torch.profiler.record_function("execute_context_0(0)_generation_2(2)"):
                out = model(tok, past_key_values=past, use_cache=True)
                past = out.past_key_values
                tok = out.logits[:, -1:].argmax(-1)
                residual_scale(out.logits[:, -1], 0.5)
        torch.cuda.synchronize()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "llama_tiny-rank-0.pt.trace.json.gz")
    prof.export_chrome_trace(path)
    print("wrote", path, os.path.getsize(path), "bytes")
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
