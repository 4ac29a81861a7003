#!/usr/bin/env python3
"""A local Hugging Face tokenizer directory for the peer clients (vllm bench serve, AIPerf) built
with `tokenizers` only (no hub): a word-level vocabulary of VOCAB words "w0".."wN" plus [UNK],
[BOS], [EOS], whitespace pre-tokenisation, so that decode(encode(text)) keeps token counts (vLLM's
random dataset decodes token ids to text and re-encodes them). Usage: make_tokenizer.py DIR [VOCAB]"""
import json
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers


def build(out_dir, vocab_size=32000):
    specials = ["[UNK]", "[BOS]", "[EOS]"]
    vocab = {t: i for i, t in enumerate(specials)}
    for i in range(vocab_size - len(specials)):
        vocab[f"w{i}"] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with single spaces
    os.makedirs(out_dir, exist_ok=True)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]", "bos_token": "[BOS]",
              "eos_token": "[EOS]", "model_max_length": 1 << 20, "clean_up_tokenization_spaces": False}
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(out_dir, "special_tokens_map.json"), "w") as f:
        json.dump({"unk_token": "[UNK]", "bos_token": "[BOS]", "eos_token": "[EOS]"}, f)
    return out_dir


if __name__ == "__main__":
    build(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 32000)
