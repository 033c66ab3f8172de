#!/usr/bin/env node
// hf_tokenize.js: token ids from Hugging Face's own tokenizers (the Rust
// library, as its official Node bindings, npm `tokenizers`) for
// tests/t/t0214-hf-tokenizers.sh.
//
//   node hf_tokenize.js TOKENIZERS_DIR TEXTS_JSON OUTDIR NAME=tokenizer.json...
//
// TOKENIZERS_DIR is the unpacked npm package, TEXTS_JSON is
// tests/data/embed/tok-texts.json. Every tokenizer encodes every text with
// its special tokens, as a model sees it; to that list this script adds a
// long text (past any truncation) and random printable Unicode from a fixed
// seed. Variants of each tokenizer.json (other options, truncation at 40
// ids; see variants()) are written to OUTDIR as NAME-VARIANT and compared
// too. OUTDIR gets golden.json in the format test_embed_tokenizer reads:
//
//   {"models": [{"name", "tokenizer": path, "cases":
//                [{"name", "hex": input bytes, "ids": [...], "quirk"?}]}]}
//
// With --spm / --bert GOLDEN the ids of the other tests' goldens are
// checked against HF's as well (checkGolden).
//
// "hex" is what cairn gets; HF gets the same bytes decoded as UTF-8 with
// U+FFFD for invalid sequences (WHATWG, as Rust's from_utf8_lossy and
// Python's errors="replace"), since a Rust string cannot hold them.
// "quirk" marks a case where cairn differs from HF on purpose, and the
// C test does not compare it:
//   added-token     text that spells an added token ("[CLS]" typed by a
//                   user) is tokenized as text, not as the special token;
//   old-unicode-nf  an NFC/NFD/NFKC/NFKD normalizer on text where HF's own
//                   normal form is not the Unicode standard's of today
//                   (String.prototype.normalize): HF's tables predate
//                   characters such as U+32FF (Unicode 12.1); cairn uses
//                   utf8proc's current ones. Only a tokenizer.json with an
//                   explicit NF* step meets this (the models cairn targets
//                   use the Precompiled charsmap, which carries its own).
'use strict';
const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
function option(name) {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : null;
}
const spmGolden = option('--spm');
const bertGolden = option('--bert');
const [dir, textsFile, outDir, ...fixtures] = args;
if (!dir || !textsFile || !outDir || fixtures.length === 0) {
  console.error('usage: hf_tokenize.js TOKENIZERS_DIR TEXTS_JSON OUTDIR [--spm GOLDEN] [--bert GOLDEN] NAME=tokenizer.json...');
  process.exit(2);
}
const hf = require(path.resolve(dir));
const { Tokenizer } = hf;
const TRUNC = 40;

// mulberry32: a small PRNG, so the random texts are the same on every run.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Blocks to draw from: Latin, Greek, Cyrillic, Arabic, Devanagari, Thai,
// Hangul jamo, punctuation, symbols, CJK, kana, Hangul syllables,
// compatibility and half/fullwidth forms, emoji, CJK extension B.
const BLOCKS = [[0x21, 0x7e], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x52f],
  [0x600, 0x6ff], [0x900, 0x97f], [0xe00, 0xe7f], [0x1100, 0x11ff],
  [0x2000, 0x2bff], [0x3000, 0x30ff], [0x3200, 0x33ff], [0x4e00, 0x9fff],
  [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfb00, 0xfdff], [0xfe30, 0xffef],
  [0x1d400, 0x1d7ff], [0x1f300, 0x1faff], [0x20000, 0x2a6df]];
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}]$/u;

function randomText(next, n) {
  let s = '';
  while (s.length < n) {
    const [lo, hi] = BLOCKS[Math.floor(next() * BLOCKS.length)];
    const c = String.fromCodePoint(lo + Math.floor(next() * (hi - lo + 1)));
    if (PRINTABLE.test(c))
      s += next() < 0.15 ? ' ' : c;
  }
  return s;
}

function texts() {
  const t = JSON.parse(fs.readFileSync(textsFile, 'utf8'));
  const out = [...t.spm, ...t.more].map((e) => ({
    name: e.name,
    bytes: e.hex !== undefined ? Buffer.from(e.hex, 'hex') : Buffer.from(e.text, 'utf8'),
  }));
  const next = rng(20240607);
  const words = out.slice(0, 12).map((e) => e.bytes.toString('utf8')).join(' ').split(/\s+/);
  const long = [];
  for (let i = 0; i < 1500; i++)
    long.push(words[Math.floor(next() * words.length)]);
  out.push({ name: 'long', bytes: Buffer.from(long.join(' '), 'utf8') });
  for (let i = 0; i < 24; i++)
    out.push({ name: `random-${i}`, bytes: Buffer.from(randomText(next, 40 + i * 4), 'utf8') });
  return out;
}

// Every code point of the texts, as they are and as NFD and lower case
// give them: a WordPiece vocabulary with each as a word and as "##" piece
// spells any text out with no [UNK] to hide a difference. U+0000 is left
// out: cJSON cannot hold it in a string, and no real vocabulary has it.
function allChars(cases) {
  const set = new Set();
  for (const c of cases) {
    const t = new TextDecoder().decode(c.bytes);
    for (const s of [t, t.normalize('NFD'), t.toLowerCase(), t.normalize('NFD').toLowerCase()])
      for (const ch of s)
        if (ch !== '\0')
          set.add(ch);
  }
  return [...set].sort();
}

// Variants of each tokenizer.json, so that the options cairn supports are
// compared too, not only the ones the fixtures happen to use.
function variants(json, chars) {
  const v = [];
  const copy = (f) => { const j = JSON.parse(JSON.stringify(json)); f(j); return j; };
  if (!json.truncation)
    v.push(['trunc', copy((j) => {
      j.truncation = { direction: 'Right', max_length: TRUNC, strategy: 'LongestFirst', stride: 0 };
    })]);
  if (json.model.type === 'WordPiece') {
    const spell = (j) => {
      let id = Math.max(...Object.values(j.model.vocab)) + 1;
      for (const ch of chars)
        for (const p of [ch, `##${ch}`])
          if (!(p in j.model.vocab))
            j.model.vocab[p] = id++;
    };
    const bert = (opts) => copy((j) => { spell(j); Object.assign(j.normalizer, opts); });
    v.push(['chars', bert({})]);
    v.push(['chars-cased', bert({ lowercase: false, strip_accents: null })]);
    v.push(['chars-nostrip', bert({ lowercase: true, strip_accents: false })]);
    v.push(['chars-strip-cased', bert({ lowercase: false, strip_accents: true })]);
    v.push(['chars-raw', bert({ clean_text: false, handle_chinese_chars: false })]);
  } else {
    const norms = json.normalizer.normalizers;
    const pre = (opts) => copy((j) => Object.assign(j.pre_tokenizer, opts));
    v.push(['first', pre({ prepend_scheme: 'first', split: true })]);
    v.push(['never', pre({ prepend_scheme: 'never', split: true })]);
    v.push(['nosplit', pre({ prepend_scheme: 'always', split: false })]);
    v.push(['strip', copy((j) => {
      j.normalizer.normalizers = [norms[0], { type: 'Strip', strip_left: true, strip_right: true }, norms[1]];
    })]);
    for (const nf of ['NFC', 'NFD', 'NFKC', 'NFKD'])
      v.push([nf.toLowerCase(), copy((j) => { j.normalizer.normalizers = [{ type: nf }, norms[1]]; })]);
  }
  return v;
}

async function run() {
  fs.mkdirSync(outDir, { recursive: true });
  const cases = texts();
  const chars = allChars(cases);
  const models = [];
  const specs = [];
  for (const f of fixtures) {
    const eq = f.indexOf('=');
    const name = f.slice(0, eq);
    const file = path.resolve(f.slice(eq + 1));
    specs.push([name, file]);
    for (const [suffix, json] of variants(JSON.parse(fs.readFileSync(file, 'utf8')), chars)) {
      const vfile = path.resolve(outDir, `${name}-${suffix}.tokenizer.json`);
      fs.writeFileSync(vfile, JSON.stringify(json));
      specs.push([`${name}-${suffix}`, vfile]);
    }
  }
  for (const [name, file] of specs) {
    const tok = Tokenizer.fromFile(file);
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    const added = (json.added_tokens || []).map((a) => a.content);
    const nfName = ((json.normalizer || {}).normalizers || []).map((n) => n.type).find((t) => /^NFK?[CD]$/.test(t));
    const nf = nfName && hf[`${nfName.toLowerCase()}Normalizer`]();
    const out = [];
    for (const c of cases) {
      const text = new TextDecoder().decode(c.bytes);
      const enc = await tok.encode(text, null, { addSpecialTokens: true });
      const e = { name: c.name, hex: c.bytes.toString('hex'), ids: enc.getIds() };
      if (added.some((a) => text.includes(a)))
        e.quirk = 'added-token';
      else if (nf && nf.normalizeString(text) !== text.normalize(nfName))
        e.quirk = 'old-unicode-nf';
      out.push(e);
    }
    models.push({ name, tokenizer: file, cases: out });
  }
  fs.writeFileSync(path.join(outDir, 'golden.json'), JSON.stringify({ models }, null, 1));
  if (spmGolden) {
    for (const m of JSON.parse(fs.readFileSync(spmGolden, 'utf8')).models)
      await checkGolden('spm', specs, m.name, m.cases);
  }
  if (bertGolden) {
    const cases = JSON.parse(fs.readFileSync(bertGolden, 'utf8')).cases.map((c, i) => ({
      name: `case ${i}`, hex: Buffer.from(c.text, 'utf8').toString('hex'), ids: c.ids }));
    await checkGolden('tiny-bert', specs, 'tiny-bert', cases);
  }
}

// --spm, --bert: the committed or generated goldens of the other tests
// (make_spm_unigram.py's golden.json: sentencepiece's ids, and HF's written
// by hand from HF's rules where the two differ; tiny-bert's golden.json:
// an independent Python re-implementation). Are they HF's? One line per
// model, "LABEL golden vs HF: NAME N/M equal", and each case that is not.
async function checkGolden(label, specs, name, cases) {
  const spec = specs.find(([n]) => n === name);
  if (!spec)
    return;
  const tok = Tokenizer.fromFile(spec[1]);
  let equal = 0;
  for (const c of cases) {
    const text = new TextDecoder().decode(Buffer.from(c.hex, 'hex'));
    const ids = (await tok.encode(text, null, { addSpecialTokens: true })).getIds();
    if (JSON.stringify(ids) === JSON.stringify(c.ids))
      equal++;
    else
      console.log(`  ${name} / ${c.name}${c.hf ? ` (hf: ${c.hf})` : ''}: HF ${ids.join(' ')}`);
  }
  console.log(`${label} golden vs HF: ${name} ${equal}/${cases.length} equal`);
}

run().catch((e) => {
  console.error(e);
  process.exit(1);
});
