#!/usr/bin/env python3
"""make_spm_unigram.py OUTDIR: tiny SentencePiece Unigram models, their
tokenizer.json in the layout Hugging Face's converter gives XLM-R, and
golden ids from sentencepiece itself, for tests/t/t0213-spm-charsmap.sh.

Needs Debian's python3-sentencepiece (0.1.97). Nothing here is committed
output: a small multilingual corpus is generated, two models are trained
on it (a few seconds), and OUTDIR gets

  <name>.tokenizer.json   normalizer Sequence[Precompiled(charsmap),
                          Replace(Regex " {2,}" -> " ")], Metaspace, <s> $A </s>
  golden.json             {"models": [{"name", "tokenizer", "cases":
                          [{"hex": input bytes, "ids": [...], "hf": why the
                          ids are HF's and not sentencepiece's, or absent}]}]}

Models: "nmt_nfkc" (XLM-R's rule: NFKC, spaces folded, controls dropped)
and "nfkc_cf" (NFKC + case folding) with byte_fallback.

Where sentencepiece (C++) and Hugging Face's tokenizers differ, the golden
holds HF's ids (what the models were evaluated with) and says why in "hf":

  space-end   sentencepiece strips trailing whitespace; HF's chain (no
              Strip) keeps one space, which Metaspace turns into a last
              "▁" word: HF = sentencepiece + ["▁"] (so " " alone is "▁").
              Only where the rule maps the trailing characters to a space
              (nmt_nfkc does for \n, nfkc_cf does not).
  grapheme    HF looks a grapheme cluster up whole only when it is under 6
              bytes, else char by char; sentencepiece takes the longest
              match anywhere. So a 6+ byte cluster whose whole form has a
              rule (half-width kana + voiced mark, 6 bytes; conjoining
              Hangul jamo L+V+T, 9 bytes) is not composed by HF. The case
              carries HF's normalised text, written by hand from that rule
              ("ﾃﾞ" -> "テ" U+3099, each jamo unchanged), and the ids are
              sentencepiece's on it with normalisation switched off.

tests/t/t0214-hf-tokenizers.sh checks every golden here, these hand-made
ones included, against Hugging Face's library itself (all equal).
"""
import base64
import json
import os
import random
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

META = "\u2581"

WORDS_EN = ("the of and to in is was for on that with as by at from memory "
            "recall search store message session model token vector query "
            "hello world quick brown fox jumps over lazy dog finance flow "
            "office coffee naive cafe resume data return value print "
            "function class import error file path user assistant").split()
WORDS_XX = ("café naïve résumé Straße über Ελληνικά Русский язык العربية "
            "हिन्दी 日本語 テキスト カタカナ ひらがな 中文 分词 测试 自然 语言 处理 "
            "한국어 한글 텍스트 데이터 ① ② ③ ™ № ℃").split()
CODE = ["def f(x): return x**2", "if (a != b) { c->d[0] = 'e'; }",
        "for i in range(10): print(i)", "SELECT * FROM t WHERE id = 1;",
        "x += y // 2", "#include <stdio.h>"]

# The texts (shared with tests/tools/hf_tokenize.js): their "spm" list.
# Invalid UTF-8 is given as hex.
TEXTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "data", "embed", "tok-texts.json")
# HF's normalised text for the "grapheme" cases (see above).
HF_FORMS = {
    "halfwidth-kana": "カタカナ テ\u3099ータ ハ\u309aン ア",
    "hangul": "한글 텍스트 \u1112\u1161\u11ab \u1100\u1173\u11af",
}


def load_texts():
    with open(TEXTS_FILE, encoding="utf-8") as f:
        spm_texts = json.load(f)["spm"]
    out = []
    for e in spm_texts:
        raw = bytes.fromhex(e["hex"]) if "hex" in e else e["text"].encode()
        out.append((e["name"], raw) + ((HF_FORMS[e["name"]],) if e["name"] in HF_FORMS else ()))
    return out


def corpus(path):
    rnd = random.Random(7)
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(3000):
            n = rnd.randint(3, 12)
            pool = WORDS_EN if rnd.random() < 0.7 else WORDS_XX
            words = [rnd.choice(pool) for _ in range(n)]
            if rnd.random() < 0.1:
                words.append(rnd.choice(CODE))
            line = " ".join(words)
            if rnd.random() < 0.3:
                line = line.capitalize() + "."
            f.write(line + "\n")


def train(out, name, rule, vocab, byte_fallback):
    prefix = os.path.join(out, name)
    spm.SentencePieceTrainer.train(
        input=os.path.join(out, "corpus.txt"), model_prefix=prefix,
        model_type="unigram", vocab_size=vocab, normalization_rule_name=rule,
        character_coverage=0.9995, bos_id=0, pad_id=1, eos_id=2, unk_id=3,
        byte_fallback=byte_fallback, hard_vocab_limit=False, num_threads=1,
        minloglevel=2)
    return prefix + ".model"


def tokenizer_json(model_path, byte_fallback):
    m = pb.ModelProto()
    with open(model_path, "rb") as f:
        m.ParseFromString(f.read())
    charsmap = base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode()
    special = {t: {"id": t, "ids": [i], "tokens": [t]} for i, t in ((0, "<s>"), (2, "</s>"))}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": META,
                          "add_prefix_space": True},
        "post_processor": {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "<s>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [], "special_tokens": special},
        "decoder": {"type": "Metaspace", "replacement": META, "add_prefix_space": True},
        "model": {"type": "Unigram", "unk_id": 3, "byte_fallback": byte_fallback,
                  "vocab": [[p.piece, p.score] for p in m.pieces]},
    }


def raw_processor(model_path):
    """The same model with normalisation switched off (words still split
    on spaces and get a leading "▁")."""
    m = pb.ModelProto()
    with open(model_path, "rb") as f:
        m.ParseFromString(f.read())
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.precompiled_charsmap = b""
    m.normalizer_spec.remove_extra_whitespaces = False
    return spm.SentencePieceProcessor(model_proto=m.SerializeToString())


def golden(sp, raw_sp, rule, case):
    name, raw = case[0], case[1]
    text = raw.decode("utf-8", "replace")
    ids = sp.encode(text)
    why = None
    if len(case) > 2:
        ids = raw_sp.encode(case[2])
        why = "grapheme"
    elif name == "one-space" or name == "trailing-space" or \
            (name == "trailing-newline" and rule == "nmt_nfkc"):
        ids = ids + [sp.piece_to_id(META)]
        why = "space-end"
    return {"name": name, "hex": raw.hex(), "ids": [0] + ids + [2],
            "pieces": [sp.id_to_piece(i) for i in ids], **({"hf": why} if why else {})}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    corpus(os.path.join(out, "corpus.txt"))
    models = []
    for name, rule, vocab, bf in (("nmt_nfkc", "nmt_nfkc", 700, False),
                                  ("nfkc_cf", "nfkc_cf", 900, True)):
        path = train(out, name, rule, vocab, bf)
        with open(os.path.join(out, name + ".tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer_json(path, bf), f, ensure_ascii=False)
        sp = spm.SentencePieceProcessor(model_file=path)
        raw_sp = raw_processor(path)
        rnd = random.Random(3)
        long_text = " ".join(rnd.choice(WORDS_EN + WORDS_XX) for _ in range(600)).encode()
        cases = [golden(sp, raw_sp, rule, c) for c in load_texts() + [("long", long_text)]]
        models.append({"name": name, "tokenizer": name + ".tokenizer.json",
                       "cases": cases})
    with open(os.path.join(out, "golden.json"), "w", encoding="utf-8") as f:
        json.dump({"models": models}, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
