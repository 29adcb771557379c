"""The narrator engine's reference: SmolLM2 as Hugging Face's llama reads it, in numpy float32.

Written apart from the engine (narrator/llm) so that it checks it rather than repeats it:
- the weights are dequantized by the `gguf` package (llama.cpp's own Python reader);
- the tokenizer is Hugging Face's `tokenizers` BPE, built from the file's vocabulary and merges,
  with SmolLM's pre-tokenizer (each digit alone, then GPT-2's byte-level split);
- the forward pass is transformers' LlamaModel: the query and key weights are first put back in
  Hugging Face's order (the GGUF converter interleaved each head's halves), and the rotary
  positions are applied with `rotate_half` over those halves, not over adjacent pairs;
- every vector a quantized matrix multiplies is first quantized to int8 in blocks of 32, as
  llama.cpp's CPU kernels do for Q4_1 and Q8_0 weights (`quantize_row_q8_1`): scale
  max|x|/127, values rounded to the nearest (ties to even, where llama.cpp's `roundf` takes
  them away from zero), then multiplied in float32 as `q·d` (the engine multiplies the integers).

Reads one JSON object on stdin: {"texts": [str], "prompts": [[id]], "steps": n,
"products": [{"tensor": name, "x": [float]}]}. Writes one: {"encoded": [[id]], "runs": [{"tokens":
[id], "margins": [float], "top": [[[id, logit]]]}], "products": [{"values": [float],
"magnitudes": [float]}]}, where `tokens` are the greedy continuation of each prompt, `margins`
the gap between the best and second-best logit at each step, `top` the 20 largest logits at each
step, and each product is int8(x) times the named weight matrix, dequantized, with each row's
Σ|w·x| (the size of its rounding).
"""

import json
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize
from tokenizers import Tokenizer, decoders, models, pre_tokenizers


def field(reader, key):
    f = reader.fields[key]
    return [f.parts[i] for i in f.data]


def tokenizer(reader):
    tokens = [bytes(p).decode("utf-8") for p in field(reader, "tokenizer.ggml.tokens")]
    merges = [tuple(bytes(p).decode("utf-8").split(" ")) for p in field(reader, "tokenizer.ggml.merges")]
    bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges)
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def int8(x):
    """`x` (rows of a multiple of 32) as its int8 blocks give it back: q·d."""
    blocks = x.reshape(*x.shape[:-1], -1, 32)
    d = np.abs(blocks).max(axis=-1, keepdims=True) / np.float32(127)
    inverse = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    q = np.clip(np.rint(blocks * inverse), -127, 127)
    return (q * d).astype(np.float32).reshape(x.shape)


class Llama:
    def __init__(self, reader):
        meta = lambda k: reader.fields[k].parts[reader.fields[k].data[0]][0]
        self.dim = int(meta("llama.embedding_length"))
        self.heads = int(meta("llama.attention.head_count"))
        self.kv_heads = int(meta("llama.attention.head_count_kv"))
        self.layers = int(meta("llama.block_count"))
        self.eps = np.float32(meta("llama.attention.layer_norm_rms_epsilon"))
        self.base = float(meta("llama.rope.freq_base"))
        self.hd = self.dim // self.heads
        tensors = {t.name: t for t in reader.tensors}

        def w(name):
            t = tensors[name]
            return np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)

        def unpermute(m, heads):
            # llama.cpp's convert_hf_to_gguf permute(): reshape(heads, 2, hd/2, cols).swapaxes(1, 2)
            rows, cols = m.shape
            return m.reshape(heads, rows // heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)

        self.embed = w("token_embd.weight")
        self.out_norm = w("output_norm.weight")
        self.blocks = []
        for l in range(self.layers):
            p = lambda part: w(f"blk.{l}.{part}.weight")
            self.blocks.append(
                dict(
                    attn_norm=p("attn_norm"),
                    q=unpermute(p("attn_q"), self.heads),
                    k=unpermute(p("attn_k"), self.kv_heads),
                    v=p("attn_v"),
                    o=p("attn_output"),
                    ffn_norm=p("ffn_norm"),
                    gate=p("ffn_gate"),
                    up=p("ffn_up"),
                    down=p("ffn_down"),
                )
            )

    def rms(self, x, weight):
        var = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
        return (x / np.sqrt(var + self.eps)) * weight

    def rope(self, x, positions):
        # transformers' LlamaRotaryEmbedding and apply_rotary_pos_emb
        inv_freq = 1.0 / (self.base ** (np.arange(0, self.hd, 2, dtype=np.float32) / self.hd))
        freqs = np.outer(positions.astype(np.float32), inv_freq.astype(np.float32))
        emb = np.concatenate([freqs, freqs], axis=-1)
        cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]
        half = self.hd // 2
        rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
        return (x * cos + rotated * sin).astype(np.float32)

    def logits(self, ids):
        """The logits after every position of `ids` (no cache: the whole sequence each time)."""
        n = len(ids)
        x = self.embed[ids]
        positions = np.arange(n)
        mask = np.triu(np.full((n, n), -np.inf, dtype=np.float32), 1)
        group = self.heads // self.kv_heads
        for b in self.blocks:
            h = int8(self.rms(x, b["attn_norm"]))
            q = self.rope((h @ b["q"].T).reshape(n, self.heads, self.hd), positions)
            k = self.rope((h @ b["k"].T).reshape(n, self.kv_heads, self.hd), positions)
            v = (h @ b["v"].T).reshape(n, self.kv_heads, self.hd)
            k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
            scores = np.einsum("qhd,khd->hqk", q, k) / np.float32(np.sqrt(self.hd)) + mask
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            att = int8(np.einsum("hqk,khd->qhd", scores, v).reshape(n, self.dim))
            x = x + att @ b["o"].T
            h = int8(self.rms(x, b["ffn_norm"]))
            gate = h @ b["gate"].T
            x = x + int8((gate / (1 + np.exp(-gate))) * (h @ b["up"].T)) @ b["down"].T
        return int8(self.rms(x, self.out_norm)) @ self.embed.T


def main():
    reader = GGUFReader(sys.argv[1])
    request = json.load(sys.stdin)
    tok = tokenizer(reader)
    encoded = [tok.encode(t).ids for t in request["texts"]]
    model = Llama(reader)
    runs = []
    for prompt in request["prompts"]:
        ids, tokens, margins, top = list(prompt), [], [], []
        for _ in range(request["steps"]):
            last = model.logits(ids)[-1]
            order = np.argsort(-last, kind="stable")
            top.append([[int(i), float(last[i])] for i in order[:20]])
            tokens.append(int(order[0]))
            margins.append(float(last[order[0]] - last[order[1]]))
            ids.append(int(order[0]))
        runs.append({"tokens": tokens, "margins": margins, "top": top})
    tensors = {t.name: t for t in reader.tensors}
    products = []
    for product in request.get("products", []):
        t = tensors[product["tensor"]]
        w = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
        x = np.asarray(product["x"], dtype=np.float32)
        xq = int8(x[None])[0]
        products.append(
            {
                "values": [float(v) for v in xq @ w.T],
                "magnitudes": [float(v) for v in np.abs(xq) @ np.abs(w).T],
            }
        )
    json.dump({"encoded": encoded, "runs": runs, "products": products}, sys.stdout)


if __name__ == "__main__":
    main()
