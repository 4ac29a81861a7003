"""magpie_bench inputs for rms_norm at the GPU model's shapes (loop_shapes.GPU): x[T, hidden]
bf16 and the weight. Sizes: 1, 7 and 333 tokens (odd shapes for the correctness gate), 2048
(a prefill step) and last, timed, the decode batch (MAGPIE_LOOP_TIMED_TOKENS, default 32)."""
import torch

from loop_shapes import GPU, timed_tokens

H = GPU["hidden"]


def get_sizes():
    return [{"tokens": 1}, {"tokens": 7}, {"tokens": 333}, {"tokens": 2048}, {"tokens": timed_tokens()}]


def get_inputs(tokens):
    x = torch.randn(tokens, H).to(torch.bfloat16)
    w = (1.0 + 0.1 * torch.randn(H)).to(torch.bfloat16)
    return [x, w]
