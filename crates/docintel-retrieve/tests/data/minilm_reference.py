"""Independent reference for all-MiniLM-L6-v2 sentence embeddings (numpy only).

Re-implements what sentence-transformers does for this model (BERT forward,
mean pooling over the attention mask, L2 normalisation, max_seq_length 256)
without torch, from the same files `cargo xtask fetch-model minilm` installs.
Produces tests/data/minilm_reference.json, read by tests/embed.rs.

    pip install numpy safetensors tokenizers
    python3 tests/data/minilm_reference.py target/models/all-minilm-l6-v2 \
        > crates/docintel-retrieve/tests/data/minilm_reference.json
"""

import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

SENTENCES = [
    "Access control policy and procedures.",
    "The organization audits account management events every 90 days.",
    "Le chat dort sur le canapé près de la fenêtre.",
]


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


ERF = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))


def embed(w, cfg, ids):
    n = len(ids)
    h = w["embeddings.word_embeddings.weight"][ids]
    h = h + w["embeddings.position_embeddings.weight"][:n]
    h = h + w["embeddings.token_type_embeddings.weight"][0]
    h = layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads = cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def lin(name, x):
            return x @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = lin("attention.self.query", h).reshape(n, heads, d).transpose(1, 0, 2)
        k = lin("attention.self.key", h).reshape(n, heads, d).transpose(1, 0, 2)
        v = lin("attention.self.value", h).reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
        h = layer_norm(lin("attention.output.dense", a) + h, w[p + "attention.output.LayerNorm.weight"],
                       w[p + "attention.output.LayerNorm.bias"])
        f = lin("output.dense", gelu(lin("intermediate.dense", h)))
        h = layer_norm(f + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = h.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    model_dir = sys.argv[1]
    cfg = json.load(open(f"{model_dir}/config.json"))
    w = {k: v.astype(np.float64) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(256)
    out = []
    for sentence in SENTENCES:
        ids = tok.encode(sentence).ids
        out.append({"text": sentence, "token_ids": ids, "embedding": [round(float(x), 7) for x in embed(w, cfg, ids)]})
    json.dump({"model": "all-MiniLM-L6-v2", "pooling": "mean", "normalized": True, "max_seq_length": 256,
               "reference": "numpy re-implementation, float64", "sentences": out}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
