#!/usr/bin/env node
/*
 * tokcount-compare.js: measures cairn's budget token counter against real
 * BPE tokenizers, per kind of text (docs/TOKENS.md has the results).
 *
 * Samples come from the development data (never copied into the repo):
 *   prose  LoCoMo turns, one sample per session (English two-person chat)
 *   chat   BEAM messages with the code fences cut out (English, technical)
 *   code   the insides of BEAM ``` fences
 *   zh     MADial-Bench zh dialogue turns and memory events (Chinese)
 * Our counts come from the unit test binary run as a filter
 * (`test_tokcount --count` reads NUL-separated records on stdin and prints
 * one count per line), so what is measured is the C code itself.
 *
 * The tokenizers are npm packages installed outside the repo:
 *   mkdir -p /tmp/tokw/npm && cd /tmp/tokw/npm && npm init -y &&
 *     npm install @anthropic-ai/tokenizer js-tiktoken
 *   NODE_PATH=/tmp/tokw/npm/node_modules node tests/tools/tokcount-compare.js \
 *     --bin /tmp/tokw/test_tokcount --data ../shared/data
 *
 * Output, per kind and tokenizer: samples, total tokens ours and theirs,
 * the aggregate ratio ours/theirs, the 5th percentile and median of the
 * per-sample ratios, and the share of samples we under-count.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

function arg(name, dflt) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}
const bin = arg('--bin', '/tmp/tokw/test_tokcount');
const data = arg('--data', path.join(__dirname, '..', '..', '..', 'shared', 'data'));
const maxPerKind = parseInt(arg('--max', '4000'), 10);
const cacheFile = arg('--cache', '');   /* reuse BPE counts between runs */

function prose() {
    const out = [];
    const locomo = JSON.parse(fs.readFileSync(path.join(data, 'locomo-dev', 'locomo10-dev.json'), 'utf8'));
    for (const sample of locomo) {
        const conv = sample.conversation;
        for (const key of Object.keys(conv)) {
            if (!/^session_\d+$/.test(key) || !Array.isArray(conv[key])) continue;
            const text = conv[key].map(t => `${t.speaker}: ${t.text}`).join('\n');
            if (text) out.push(text);
        }
    }
    return out;
}

function beam() {
    const chat = [], code = [];
    for (let i = 1; i <= 10; i++) {
        const f = path.join(data, 'beam-100k-dev', String(i), 'chat.json');
        if (!fs.existsSync(f)) continue;
        for (const batch of JSON.parse(fs.readFileSync(f, 'utf8'))) {
            for (const turn of batch.turns || []) {
                for (const msg of turn) {
                    const parts = String(msg.content || '').split('```');
                    const prosePart = parts.filter((_, k) => k % 2 === 0).join('\n').trim();
                    if (prosePart) chat.push(prosePart);
                    for (let k = 1; k < parts.length; k += 2) {
                        const body = parts[k].replace(/^[a-zA-Z0-9+#-]*\n/, '');
                        if (body.trim()) code.push(body);
                    }
                }
            }
        }
    }
    return { chat, code };
}

function zh() {
    const out = [];
    const dir = path.join(data, 'madial-dev', 'zh');
    for (const f of fs.readdirSync(dir)) {
        for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
            if (!line.trim()) continue;
            const o = JSON.parse(line);
            if (Array.isArray(o.dialogue)) {
                out.push(o.dialogue.join(''));
            } else {
                for (const v of Object.values(o)) if (v && v.event) out.push(v.event);
            }
        }
    }
    return out;
}

function ours(texts) {
    const input = Buffer.from(texts.join('\0'), 'utf8');
    const res = execFileSync(bin, ['--count'], { input, maxBuffer: 1 << 28 }).toString();
    const v = res.trim().split('\n').map(Number);
    if (v.length !== texts.length) throw new Error(`got ${v.length} counts for ${texts.length} texts`);
    return v;
}

function pct(a, p) {
    const s = [...a].sort((x, y) => x - y);
    return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

const { countTokens } = require('@anthropic-ai/tokenizer');
const { getEncoding } = require('js-tiktoken');
const cl100k = getEncoding('cl100k_base');
const o200k = getEncoding('o200k_base');
const refs = {
    claude: t => countTokens(t),
    cl100k: t => cl100k.encode(t, 'all').length,
    o200k: t => o200k.encode(t, 'all').length,
};

const b = beam();
const kinds = { prose: prose(), chat: b.chat, code: b.code, zh: zh() };
const cache = cacheFile && fs.existsSync(cacheFile) ? JSON.parse(fs.readFileSync(cacheFile, 'utf8')) : {};
console.log('kind   ref     samples   ours      theirs    ratio  p5     median under');
for (const [kind, all] of Object.entries(kinds)) {
    const texts = all.filter(t => t.indexOf('\0') < 0).slice(0, maxPerKind);
    const mine = ours(texts);
    const sumMine = mine.reduce((x, y) => x + y, 0);
    for (const [name, f] of Object.entries(refs)) {
        const key = `${kind}/${name}/${texts.length}`;
        const theirs = cache[key] || texts.map(f);
        cache[key] = theirs;
        const sumTheirs = theirs.reduce((x, y) => x + y, 0);
        const ratios = mine.map((m, i) => (theirs[i] ? m / theirs[i] : 1));
        const under = ratios.filter(r => r < 1).length / ratios.length;
        console.log(`${kind.padEnd(6)} ${name.padEnd(7)} ${String(texts.length).padStart(7)} ` +
            `${String(sumMine).padStart(9)} ${String(sumTheirs).padStart(9)}  ` +
            `${(sumMine / sumTheirs).toFixed(3)}  ${pct(ratios, 0.05).toFixed(3)}  ` +
            `${pct(ratios, 0.5).toFixed(3)}  ${(100 * under).toFixed(1)}%`);
    }
}
if (cacheFile) fs.writeFileSync(cacheFile, JSON.stringify(cache));
