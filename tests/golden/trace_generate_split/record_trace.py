"""Record the real generate-style traces of the trace_generate_split golden test (H200 2026-12-03;
scheduled_steps 2026-12-06, on the GPU named in its entry).

A 4-layer Llama-like model (random bf16 weights, built from a config: no hub download) runs
  hf_generate:   transformers' generate() on a batch of 4 prompts x 32 tokens, 10 new tokens
                 (1 prefill forward of 128 tokens, then 9 decode forwards of 4 tokens each);
                 no step annotations of any kind.
  profiler_step: a hand-written loop, one prof.step() per forward: a prefill of 2 prompts x 24
                 tokens, then 6 decode steps of 2 tokens. Without a profiler schedule torch
                 records no ProfilerStep#N annotations (the H200 recording has none), so this is
                 a second unannotated shape, not the ProfilerStep path.
  scheduled_steps: the same loop under a profiler schedule (wait 1, warmup 1, active 7): torch
                 writes one ProfilerStep#N range per recorded step, the path magpie takes
                 before any inference from the forward pattern.
The structure is written next to the traces (structure.json) so the test asserts facts
recorded with them, not numbers read back from our own output.

Usage: python3 record_trace.py OUT_DIR [NAME ...]   (default: all three; entries of an existing
OUT_DIR/structure.json for other names are kept)
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


def step_loop(cfg, model, prof, prompts, decodes):
    """One prefill forward, then `decodes` one-token forwards; prof.step() after each."""
    ids = torch.randint(3, cfg.vocab_size, prompts, device="cuda")
    out = model(ids, use_cache=True)
    past, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
    prof.step()
    for _ in range(decodes):
        out = model(tok, past_key_values=past, use_cache=True)
        past, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
        prof.step()


def profiler_step(cfg, model, out_dir):
    with torch.no_grad():
        model(torch.randint(3, cfg.vocab_size, (2, 24), device="cuda"), use_cache=True)
    torch.cuda.synchronize()
    with torch.no_grad(), torch.profiler.profile(activities=ACTS, record_shapes=True) as prof:
        step_loop(cfg, model, prof, (2, 24), 6)
        torch.cuda.synchronize()
    path = os.path.join(out_dir, "profiler_step.pt.trace.json.gz")
    prof.export_chrome_trace(path)
    return {"file": os.path.basename(path), "batch": 2, "prompt_len": 24, "forwards": 7, "prefill_forwards": 1,
            "decode_forwards": 6, "prefill_tokens": 48, "decode_tokens_per_step": 2, "annotations": "none"}


def scheduled_steps(cfg, model, out_dir):
    path = os.path.join(out_dir, "scheduled_steps.pt.trace.json.gz")
    # Steps 0 (wait) and 1 (warm-up) are a whole throw-away generation of 2 forwards; steps 2-8
    # (active) are the recorded prefill of 3 x 20 tokens and 6 decodes of 3 tokens.
    sched = torch.profiler.schedule(wait=1, warmup=1, active=7, repeat=1)
    with torch.no_grad(), torch.profiler.profile(activities=ACTS, record_shapes=True, schedule=sched,
                                                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        step_loop(cfg, model, prof, (3, 20), 1)
        torch.cuda.synchronize()
        step_loop(cfg, model, prof, (3, 20), 6)
        torch.cuda.synchronize()
    return {"file": os.path.basename(path), "batch": 3, "prompt_len": 20, "forwards": 7, "prefill_forwards": 1,
            "decode_forwards": 6, "prefill_tokens": 60, "decode_tokens_per_step": 3, "annotations": "ProfilerStep"}


RECORDERS = {"hf_generate": hf_generate, "profiler_step": profiler_step, "scheduled_steps": scheduled_steps}


def main(out_dir, names):
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    cfg, model = build()
    meta_path = os.path.join(out_dir, "structure.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    kept = [r for r in meta.get("traces", []) if r["file"].split(".")[0] not in names]
    for r in kept:  # entries recorded before per-trace fields existed: the top-level ones
        for k in ("gpu", "torch", "transformers"):
            r.setdefault(k, meta.get(k))
    runs = [RECORDERS[n](cfg, model, out_dir) for n in names]
    for r in runs:
        r["bytes"] = os.path.getsize(os.path.join(out_dir, r["file"]))
        r.update(gpu=torch.cuda.get_device_name(0), torch=torch.__version__, transformers=transformers.__version__,
                 date=time.strftime("%Y-%m-%d"))
    meta = {"model": "LlamaForCausalLM 4 layers, hidden 512, 8 heads / 2 KV heads, bf16, random weights",
            "seconds": round(time.time() - t0, 1), "traces": kept + runs}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".", sys.argv[2:] or list(RECORDERS))
