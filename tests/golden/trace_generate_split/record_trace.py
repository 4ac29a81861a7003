"""Record the real generate-style traces of the trace_generate_split golden test (H200, 2026-12-03).

A 4-layer Llama-like model (random bf16 weights, built from a config: no hub download) runs
  hf_generate:   transformers' generate() on a batch of 4 prompts x 32 tokens, 10 new tokens
                 (1 prefill forward of 128 tokens, then 9 decode forwards of 4 tokens each);
                 no step annotations of any kind.
  profiler_step: a hand-written loop, one prof.step() per forward: a prefill of 2 prompts x 24
                 tokens, then 6 decode steps of 2 tokens. Without a profiler schedule torch
                 records no ProfilerStep#N annotations (the H200 recording has none), so this is
                 a second unannotated shape, not the ProfilerStep path.
The structure is written next to the traces (structure.json) so the test asserts facts
recorded with them, not numbers read back from our own output.

Usage: python3 record_trace.py OUT_DIR
"""
import json
import os
import sys
import time

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

ACTS = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]


def build():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=4096, hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                      num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=512,
                      bos_token_id=1, eos_token_id=2, pad_token_id=0)
    return cfg, LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()


def hf_generate(cfg, model, out_dir):
    ids = torch.randint(3, cfg.vocab_size, (4, 32), device="cuda")
    mask = torch.ones_like(ids)
    kw = dict(attention_mask=mask, max_new_tokens=10, min_new_tokens=10, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        model.generate(ids, **kw)  # warm-up (cuBLAS handles, allocator)
    torch.cuda.synchronize()
    with torch.no_grad(), torch.profiler.profile(activities=ACTS, record_shapes=True) as prof:
        out = model.generate(ids, **kw)
        torch.cuda.synchronize()
    path = os.path.join(out_dir, "hf_generate.pt.trace.json.gz")
    prof.export_chrome_trace(path)
    return {"file": os.path.basename(path), "batch": 4, "prompt_len": 32, "new_tokens": int(out.shape[1] - 32),
            "forwards": 10, "prefill_forwards": 1, "decode_forwards": 9, "prefill_tokens": 128,
            "decode_tokens_per_step": 4, "annotations": "none"}


def profiler_step(cfg, model, out_dir):
    ids = torch.randint(3, cfg.vocab_size, (2, 24), device="cuda")
    with torch.no_grad():
        model(ids, use_cache=True)
    torch.cuda.synchronize()
    with torch.no_grad(), torch.profiler.profile(activities=ACTS, record_shapes=True) as prof:
        out = model(ids, use_cache=True)
        past, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
        prof.step()
        for _ in range(6):
            out = model(tok, past_key_values=past, use_cache=True)
            past, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
            prof.step()
        torch.cuda.synchronize()
    path = os.path.join(out_dir, "profiler_step.pt.trace.json.gz")
    prof.export_chrome_trace(path)
    return {"file": os.path.basename(path), "batch": 2, "prompt_len": 24, "forwards": 7, "prefill_forwards": 1,
            "decode_forwards": 6, "prefill_tokens": 48, "decode_tokens_per_step": 2, "annotations": "none"}


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    cfg, model = build()
    runs = [hf_generate(cfg, model, out_dir), profiler_step(cfg, model, out_dir)]
    for r in runs:
        r["bytes"] = os.path.getsize(os.path.join(out_dir, r["file"]))
    meta = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "transformers": transformers.__version__,
            "model": "LlamaForCausalLM 4 layers, hidden 512, 8 heads / 2 KV heads, bf16, random weights",
            "seconds": round(time.time() - t0, 1), "traces": runs}
    with open(os.path.join(out_dir, "structure.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
