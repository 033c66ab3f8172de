#!/usr/bin/env python3
"""make_tiny_bert.py: writes the tiny random-weight BERT that the encoder
tests use, and the golden token ids and vectors cairn must reproduce.

Test-time only (cairn itself never runs Python). Needs Debian's
python3-torch and python3-numpy (`apt-get install python3-torch`); run it
with the Debian interpreter from the repository root:

    /usr/bin/python3 tests/tools/make_tiny_bert.py [OUTDIR]

OUTDIR (default tests/data/embed/tiny-bert) receives
  config.json        BertModel config: 2 layers, hidden 64, 4 heads,
                     intermediate 128, max_position 64, gelu
  tokenizer.json     WordPiece, a hand-made ~210-piece vocab, BertNormalizer
                     (lowercase + strip accents), BertPreTokenizer,
                     [CLS] $A [SEP] TemplateProcessing, truncation 48
  model.safetensors  random weights, seed 1234, in three dtypes on purpose:
                     word embeddings BF16, the 2-D layer weights F16, all
                     else F32 (so the loader's conversions are exercised);
                     Hugging Face names without the "bert." prefix
  golden.json        per text: the token ids (from the reference tokenizer
                     below) and the mean-pooled and CLS-pooled L2-normalised
                     vectors of a float64 torch forward pass over the
                     exact (dequantised) weights

The reference tokenizer here is an independent re-implementation of HF
tokenizers' BertNormalizer + BertPreTokenizer + WordPiece on Python's
unicodedata (the `tokenizers` package is not in Debian). Its cases were
also checked by hand; tests/unit/test_embed_tokenizer.c carries a few of
them written out literally.
"""
import json
import os
import struct
import sys
import unicodedata

import numpy as np
import torch

HIDDEN, LAYERS, HEADS, INTER, MAXPOS, TYPES = 64, 2, 4, 128, 64, 2
TRUNC = 48
EPS = 1e-12

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789") + list(".,!?'\"()-_:;/=+*#@[]{}<>$%&^~|\\`")
WORDS = ["the", "cat", "sat", "on", "mat", "hello", "world", "dog", "ran",
         "quick", "brown", "fox", "jump", "un", "cafe", "naive", "resume",
         "def", "return", "print", "self", "int", "main", "memory", "store",
         "sql", "token", "embed", "over", "lazy", "what", "did", "we",
         "say", "about", "python", "code", "🙂", "中", "国", "我", "们", "的",
         "人", "爱", "北", "京", "ß"]
CONT = ["##" + c for c in "abcdefghijklmnopqrstuvwxyz0123456789ß"] + \
       ["##s", "##ed", "##ing", "##er", "##aff", "##able", "##ite", "##lite",
        "##izer", "##ding", "##3"]


def build_vocab():
    vocab = []
    for p in SPECIALS + CHARS + WORDS + CONT:
        if p not in vocab:
            vocab.append(p)
    return vocab


# ---- reference tokenizer (HF BertNormalizer/BertPreTokenizer/WordPiece) ----

def is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c) in ("Cc", "Cf", "Cn", "Co")


def is_cjk(c):
    cp = ord(c)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or
            0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F or
            0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or
            0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def is_punct(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def rust_ws(c):
    # Rust char::is_whitespace: the White_Space property.
    cp = ord(c)
    return (0x09 <= cp <= 0x0d or cp == 0x20 or cp == 0x85 or cp == 0xa0 or
            cp == 0x1680 or 0x2000 <= cp <= 0x200a or cp in
            (0x2028, 0x2029, 0x202f, 0x205f, 0x3000))


def normalize(text):
    out = []
    for c in text:
        if ord(c) == 0 or ord(c) == 0xFFFD or is_control(c):
            continue
        if rust_ws(c):
            c = " "
        out.append(" " + c + " " if is_cjk(c) else c)
    s = "".join(out)
    s = unicodedata.normalize("NFD", s)
    s = "".join(c for c in s if unicodedata.category(c) != "Mn")
    return s.lower()


def pretokenize(s):
    words, cur = [], ""
    for c in s:
        if rust_ws(c):
            if cur:
                words.append(cur)
            cur = ""
        elif is_punct(c):
            if cur:
                words.append(cur)
            words.append(c)
            cur = ""
        else:
            cur += c
    if cur:
        words.append(cur)
    return words


def wordpiece(word, ids):
    if len(word) > 100:
        return [ids["[UNK]"]]
    out, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while end > start:
            sub = word[start:end]
            if start > 0:
                sub = "##" + sub
            if sub in ids:
                found = ids[sub]
                break
            end -= 1
        if found is None:
            return [ids["[UNK]"]]
        out.append(found)
        start = end
    return out


def tokenize(text, ids, max_len=TRUNC):
    seq = []
    for w in pretokenize(normalize(text)):
        seq.extend(wordpiece(w, ids))
    seq = seq[:max_len - 2]
    return [ids["[CLS]"]] + seq + [ids["[SEP]"]]


# ---- model -----------------------------------------------------------------

def names():
    n = ["embeddings.word_embeddings.weight",
         "embeddings.position_embeddings.weight",
         "embeddings.token_type_embeddings.weight",
         "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(LAYERS):
        p = "encoder.layer.%d." % i
        for m in ("attention.self.query", "attention.self.key",
                  "attention.self.value", "attention.output.dense",
                  "intermediate.dense", "output.dense"):
            n += [p + m + ".weight", p + m + ".bias"]
        n += [p + "attention.output.LayerNorm.weight",
              p + "attention.output.LayerNorm.bias",
              p + "output.LayerNorm.weight", p + "output.LayerNorm.bias"]
    return n


def shape_of(name, vocab_size):
    if "word_embeddings" in name:
        return (vocab_size, HIDDEN)
    if "position_embeddings" in name:
        return (MAXPOS, HIDDEN)
    if "token_type" in name:
        return (TYPES, HIDDEN)
    if "LayerNorm" in name:
        return (HIDDEN,)
    if "intermediate.dense" in name:
        return (INTER, HIDDEN) if name.endswith("weight") else (INTER,)
    if name.endswith("output.dense.weight") and "attention" not in name:
        return (HIDDEN, INTER)
    return (HIDDEN, HIDDEN) if name.endswith("weight") else (HIDDEN,)


def make_weights(vocab_size, gen):
    w = {}
    for n in names():
        shp = shape_of(n, vocab_size)
        if "LayerNorm.weight" in n:
            t = 1.0 + 0.1 * torch.randn(shp, generator=gen)
        elif "LayerNorm.bias" in n or n.endswith(".bias"):
            t = 0.05 * torch.randn(shp, generator=gen)
        elif "embeddings" in n:
            t = 0.5 * torch.randn(shp, generator=gen)
        else:
            t = 0.15 * torch.randn(shp, generator=gen)
        if "word_embeddings" in n:
            dt = "BF16"
            t = t.to(torch.bfloat16)
        elif len(shp) == 2 and "embeddings" not in n:
            dt = "F16"
            t = t.to(torch.float16)
        else:
            dt = "F32"
            t = t.to(torch.float32)
        w[n] = (dt, t)
    return w


def write_safetensors(path, weights):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for n, (dt, t) in weights.items():
        if dt == "BF16":
            raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
        elif dt == "F16":
            raw = t.numpy().astype("<f2").tobytes()
        else:
            raw = t.numpy().astype("<f4").tobytes()
        header[n] = {"dtype": dt, "shape": list(t.shape),
                     "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)     # align the data to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def forward(weights, ids_list):
    """float64 BERT forward; returns (mean-pooled, cls) L2-normalised."""
    W = {n: t.to(torch.float64) for n, (dt, t) in weights.items()}
    mean_out, cls_out = [], []
    for ids in ids_list:
        L = len(ids)
        x = W["embeddings.word_embeddings.weight"][torch.tensor(ids)]
        x = x + W["embeddings.position_embeddings.weight"][:L]
        x = x + W["embeddings.token_type_embeddings.weight"][0]
        x = torch.nn.functional.layer_norm(x, (HIDDEN,), W["embeddings.LayerNorm.weight"],
                                           W["embeddings.LayerNorm.bias"], EPS)
        hd = HIDDEN // HEADS
        for i in range(LAYERS):
            p = "encoder.layer.%d." % i

            def lin(name, v):
                return v @ W[p + name + ".weight"].T + W[p + name + ".bias"]
            q = lin("attention.self.query", x).view(L, HEADS, hd).transpose(0, 1)
            k = lin("attention.self.key", x).view(L, HEADS, hd).transpose(0, 1)
            v = lin("attention.self.value", x).view(L, HEADS, hd).transpose(0, 1)
            s = torch.softmax(q @ k.transpose(1, 2) / (hd ** 0.5), dim=-1)
            ctx = (s @ v).transpose(0, 1).reshape(L, HIDDEN)
            a = lin("attention.output.dense", ctx)
            x = torch.nn.functional.layer_norm(a + x, (HIDDEN,),
                                               W[p + "attention.output.LayerNorm.weight"],
                                               W[p + "attention.output.LayerNorm.bias"], EPS)
            h = torch.nn.functional.gelu(lin("intermediate.dense", x))
            o = lin("output.dense", h)
            x = torch.nn.functional.layer_norm(o + x, (HIDDEN,),
                                               W[p + "output.LayerNorm.weight"],
                                               W[p + "output.LayerNorm.bias"], EPS)
        m = x.mean(0)
        mean_out.append((m / m.norm()).tolist())
        c = x[0]
        cls_out.append((c / c.norm()).tolist())
    return mean_out, cls_out


TEXTS = [
    "Hello, world!",
    "The quick brown fox jumped over the lazy dog.",
    "unaffable",
    "我们爱北京",
    "hello中国world 的人",
    "I \u2764\ufe0f \U0001F642 cats \U0001F468\u200d\U0001F469\u200d\U0001F467 ok",
    "Café naïve RÉSUMÉ ÀÉÎÕÜ Straße",
    "def main(self): return x+1 # sqlite3 <a href=\"x\">$5</a>",
    "\tcat\u0001 sat\u200b on\r\nmat\u00a0\u3000the\x0bdog",
    "ab" * 50,
    "ab" * 50 + "a",
    "",
    "   \n\t ",
    "2024-11-29 12:30, what did we say about python code?",
    "Ωmega ωmega",
    "the cat sat on the mat. " * 400,
    "x" * 5000 + " cat",
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/embed/tiny-bert"
    os.makedirs(out, exist_ok=True)
    vocab = build_vocab()
    ids = {p: i for i, p in enumerate(vocab)}
    gen = torch.Generator().manual_seed(1234)
    weights = make_weights(len(vocab), gen)

    config = {
        "architectures": ["BertModel"], "model_type": "bert",
        "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "intermediate_size": INTER,
        "hidden_act": "gelu", "max_position_embeddings": MAXPOS,
        "type_vocab_size": TYPES, "vocab_size": len(vocab),
        "layer_norm_eps": EPS, "pad_token_id": 0,
    }
    tokenizer = {
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": TRUNC,
                       "strategy": "LongestFirst", "stride": 0},
        "padding": None,
        "added_tokens": [{"id": ids[s], "content": s, "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True} for s in SPECIALS],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [ids["[CLS]"]], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [ids["[SEP]"]], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False, indent=1)
        f.write("\n")
    write_safetensors(os.path.join(out, "model.safetensors"), weights)

    id_lists = [tokenize(t, ids) for t in TEXTS]
    mean_v, cls_v = forward(weights, id_lists)
    golden = {"note": "generated by tests/tools/make_tiny_bert.py; do not edit",
              "max_length": TRUNC, "cases": []}
    for t, i, m, c in zip(TEXTS, id_lists, mean_v, cls_v):
        golden["cases"].append({
            "text": t, "ids": i,
            "tokens": [vocab[x] for x in i],
            "mean": [round(v, 7) for v in m],
            "cls": [round(v, 7) for v in c]})
    with open(os.path.join(out, "golden.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("wrote %s: vocab %d, %d cases" % (out, len(vocab), len(TEXTS)))


if __name__ == "__main__":
    main()
