#!/usr/bin/env node
/*
 * tokcount-compare.js: measures cairn's budget token counter against real
 * BPE tokenizers, per kind of text (docs/TOKENS.md has the results).
 *
 * Samples, never copied into the repo:
 *   prose  LoCoMo turns, one sample per session (English two-person chat)
 *   chat   BEAM messages with the code fences cut out (English, technical)
 *   code   the insides of BEAM ``` fences
 *   zh     MADial-Bench zh dialogue turns and memory events (Chinese)
 *   fr de es pt pl ru ja   Debian's translated manual pages, one sample a
 *          page (manpages-fr, -de, -es, -pt-br, -pl, -ru, -ja: the files
 *          `dpkg -L` lists), the roff markup stripped
 *   ko     the Debian FAQ in Korean (debian-faq-ko's text version; Debian
 *          12 has no manpages-ko), one sample a group of paragraphs
 * The first four need ../shared/data, the others scripts/deps.sh's
 * packages. Our counts come from the unit test binary run as a filter
 * (`test_tokcount --count` reads NUL-separated records on stdin and prints
 * one count per line), so what is measured is the C code itself.
 *
 * Run it with tests/tools/tokcount-compare.sh, which installs the
 * tokenizers (npm, pinned) into a cache folder. Options:
 *   --kinds a,b   only these kinds
 *   --max N       at most N samples a kind (4000); --max-bytes B: at most
 *                 about B bytes of a language's pages (3000000)
 *   --cache FILE  keep the BPE counts for later runs (constant sweeps)
 *   --refs FILE   instead: recount tests/data/tokcount/langs.txt's texts
 *                 with the three tokenizers and say which recorded counts
 *                 differ (t0520-tokcount-langs); exits 1 if any does
 *   --recall      instead: each kind's samples become a store (a session a
 *                 sample, a message a paragraph), `cairn recall --batch`
 *                 answers --queries N questions (words taken from the
 *                 samples) at budgets 300, 1000, 2000, 4000 and 8000, and
 *                 each packed text is counted by every tokenizer;
 *                 --dump FILE appends the texts over their budget to FILE
 *
 * Output, per kind and tokenizer: samples, total tokens ours and theirs,
 * the aggregate ratio ours/theirs, the 5th percentile and median of the
 * per-sample ratios, and the share of samples we under-count. With
 * --recall: packed texts, how many the tokenizer counts over the budget,
 * the largest theirs/budget, and the mean theirs/budget (how full).
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

function arg(name, dflt) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}
const bin = arg('--bin', 'build/tests/test_tokcount');
const cairn = arg('--cairn', 'build/cairn');
const data = arg('--data', path.join(__dirname, '..', '..', '..', 'shared', 'data'));
const maxPerKind = parseInt(arg('--max', '4000'), 10);
const maxBytes = parseInt(arg('--max-bytes', '3000000'), 10);
const cacheFile = arg('--cache', '');   /* reuse BPE counts between runs */
const onlyKinds = arg('--kinds', '');
const recallMode = process.argv.includes('--recall');
const nQueries = parseInt(arg('--queries', '60'), 10);
const dumpFile = arg('--dump', '');

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

let beamMemo = null;
function beam() {
    if (beamMemo) return beamMemo;
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
    beamMemo = { chat, code };
    return beamMemo;
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

/* A manual page's text: roff requests and escapes removed, the words of
 * font and heading macros kept, a blank line between paragraphs. */
function roffText(src) {
    const out = [];
    for (let line of src.split('\n')) {
        if (/^['.]\s*\\"/.test(line)) continue;                  /* comment */
        const m = /^[.']\s*([A-Za-z]+)\s*(.*)$/.exec(line);
        if (m) {
            const [, mac, rest] = m;
            if (/^(SH|SS)$/.test(mac)) { out.push('', rest.replace(/"/g, '')); continue; }
            if (/^(B|I|BR|RB|IR|RI|BI|IB|SM|SB)$/.test(mac)) {
                line = rest.replace(/"/g, '');
            } else if (/^(IP|TP|PP|P|LP|HP|sp|br)$/.test(mac)) {
                out.push('');
                line = mac === 'IP' ? rest.replace(/"/g, '').split(/\s+\d+$/)[0] : '';
                if (!line) continue;
            } else {
                continue;                                       /* other requests */
            }
        }
        line = line.replace(/\\f(\[[^\]]*\]|\(..|.)/g, '')
            .replace(/\\\(em|\\\[em\]/g, '—').replace(/\\\(en|\\\[en\]/g, '–')
            .replace(/\\\(aq|\\\[aq\]/g, "'").replace(/\\\(dq|\\\[dq\]/g, '"')
            .replace(/\\\(lq|\\\(rq/g, '"').replace(/\\\(bu/g, '•')
            .replace(/\\\*(\[[^\]]*\]|\(..|.)/g, '').replace(/\\\((..)/g, '')
            .replace(/\\\[[^\]]*\]/g, '').replace(/\\[-e]/g, (x) => (x === '\\-' ? '-' : '\\'))
            .replace(/\\[ ~0]/g, ' ').replace(/\\[&|^,/%:]/g, '').replace(/\\(.)/g, '$1');
        out.push(line);
    }
    return out.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

function dpkgFiles(pkg) {
    try {
        return execFileSync('dpkg', ['-L', pkg], { stdio: ['ignore', 'pipe', 'ignore'] })
            .toString().split('\n');
    } catch (e) {
        return [];
    }
}

/* The pages of manpages-LANG, sorted, as text. */
function manPages(pkg) {
    const zlib = require('zlib');
    const files = dpkgFiles(pkg).filter(f => /\/man\/[^/]+\/man\d\/[^/]+\.gz$/.test(f)).sort();
    const out = [];
    for (const f of files) {
        let t;
        try {
            t = roffText(zlib.gunzipSync(fs.readFileSync(f)).toString('utf8'));
        } catch (e) {
            continue;                                   /* a symlink to nothing */
        }
        if (t.length >= 200) out.push(t);               /* not a .so stub */
    }
    return out;
}

/* The Korean Debian FAQ: paragraphs grouped into samples of ~2 KB. */
function koFaq() {
    const zlib = require('zlib');
    const f = '/usr/share/doc/debian/FAQ/debian-faq.ko.txt.gz';
    if (!fs.existsSync(f)) return [];
    const out = [];
    let cur = '';
    for (const para of zlib.gunzipSync(fs.readFileSync(f)).toString('utf8').split(/\n\s*\n/)) {
        cur = cur ? cur + '\n\n' + para.trim() : para.trim();
        if (cur.length >= 2000) { out.push(cur); cur = ''; }
    }
    if (cur) out.push(cur);
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

/* The legacy Claude tokenizer, built once: its countTokens() builds a new
 * one per call (slow) and counts the text NFKC-normalised, as here. */
const claudeTok = require('@anthropic-ai/tokenizer').getTokenizer();
/* tiktoken's WASM build: js-tiktoken (pure JS) gives the same counts but
 * takes minutes on one long run of a repeated character. */
const { get_encoding } = require('tiktoken');
const cl100k = get_encoding('cl100k_base');
const o200k = get_encoding('o200k_base');
const refs = {
    claude: t => claudeTok.encode(t.normalize('NFKC'), 'all').length,
    cl100k: t => cl100k.encode(t, 'all').length,
    o200k: t => o200k.encode(t, 'all').length,
};

const sources = {
    prose: () => prose(),
    chat: () => beam().chat,
    code: () => beam().code,
    zh: () => zh(),
    fr: () => manPages('manpages-fr'),
    de: () => manPages('manpages-de'),
    es: () => manPages('manpages-es'),
    pt: () => manPages('manpages-pt-br'),
    pl: () => manPages('manpages-pl'),
    ru: () => manPages('manpages-ru'),
    ja: () => manPages('manpages-ja'),
    ko: () => koFaq(),
};

/* A kind's samples: no NUL, at most --max of them and --max-bytes. */
function samples(kind) {
    let all;
    try {
        all = sources[kind]();
    } catch (e) {
        console.error(`${kind}: no data (${e.message.split('\n')[0]})`);
        return [];
    }
    const out = [];
    let bytes = 0;
    const capped = !['prose', 'chat', 'code', 'zh'].includes(kind);   /* the big page sets */
    for (const t of all) {
        if (t.indexOf('\0') >= 0) continue;
        if (out.length >= maxPerKind || (capped && bytes >= maxBytes)) break;
        out.push(t);
        bytes += Buffer.byteLength(t);
    }
    if (!out.length) console.error(`${kind}: no samples (its package or data set is missing)`);
    return out;
}

/* Deterministic question words: a letter run (or 2-3 CJK characters)
 * from the middle of every k-th sample. */
function questions(texts, n) {
    const qs = [];
    const step = Math.max(1, Math.floor(texts.length / n));
    for (let i = 0; i < texts.length && qs.length < n; i += step) {
        const t = texts[i];
        const words = t.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]{2,3}|\p{L}{5,}/gu) || [];
        if (words.length) qs.push(words[Math.floor(words.length / 2)]);
    }
    return qs;
}

function recallRows(kind, texts, cache) {
    const os = require('os');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokcount-'));
    const db = path.join(dir, 'memory.db');
    try {
        const sessions = texts.map((t, i) => JSON.stringify({
            id: `${kind}-${i}`, source: 'tokcount', title: `${kind} ${i}`,
            started_at: 1700000000 + 3600 * i,
            messages: t.split(/\n\s*\n/).filter(p => p.trim()).map((p, k) => ({
                role: k % 2 ? 'assistant' : 'user', content: p,
            })),
        }));
        /* keyword recall: packing is the same, and no model is needed */
        const env = { ...process.env, TZ: 'UTC', CAIRN_EMBED_MODEL: 'none' };
        execFileSync(cairn, ['--db', db, 'add', '-'], { input: sessions.join('\n'), env,
            stdio: ['pipe', 'ignore', 'inherit'] });
        const budgets = [300, 1000, 2000, 4000, 8000];
        const input = questions(texts, nQueries)
            .map((q, i) => JSON.stringify({ id: String(i), query: q, budgets })).join('\n');
        const res = execFileSync(cairn, ['--db', db, 'recall', '--batch'], { input, env, maxBuffer: 1 << 28 });
        const packed = res.toString().trim().split('\n').map(l => JSON.parse(l)).filter(r => r.text);
        for (const [name, f] of Object.entries(refs)) {
            const key = `recall/${kind}/${name}/${texts.length}/${packed.length}`;
            const theirs = cache[key] || packed.map(r => f(r.text));
            cache[key] = theirs;
            const fill = packed.map((r, i) => theirs[i] / r.budget);
            if (dumpFile) {     /* the texts over their budget, to see why */
                packed.forEach((r, i) => {
                    if (fill[i] > 1) fs.appendFileSync(dumpFile, `=== ${kind} ${name} ${theirs[i]} > ` +
                        `${r.budget} (ours ${r.tokens}) query ${r.query}\n${r.text}\n`);
                });
            }
            const over = fill.filter(x => x > 1).length;
            const mean = fill.reduce((x, y) => x + y, 0) / (fill.length || 1);
            console.log(`${kind.padEnd(6)} ${name.padEnd(7)} ${String(packed.length).padStart(7)} ` +
                `${String(over).padStart(5)}  ${Math.max(...fill).toFixed(3)}  ${mean.toFixed(3)}`);
        }
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

function ratioRows(kind, texts, cache) {
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

/* --refs: the recorded reference counts are what the tokenizers say. */
function checkRefs(file) {
    let n = 0, bad = 0;
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        const m = /^(\S+) (\d+) (\d+) (\d+)\t(.*)$/.exec(line);
        if (!m) continue;
        const got = [refs.claude(m[5]), refs.cl100k(m[5]), refs.o200k(m[5])];
        n++;
        if (got.join(' ') !== `${m[2]} ${m[3]} ${m[4]}`) {
            bad++;
            console.log(`differs: ${m[1]} recorded ${m[2]} ${m[3]} ${m[4]}, counted ${got.join(' ')}`);
        }
    }
    console.log(`refs: ${n} texts, ${bad} differ`);
    process.exit(bad || !n ? 1 : 0);
}
if (arg('--refs', '')) checkRefs(arg('--refs', ''));

const kinds = onlyKinds ? onlyKinds.split(',') : Object.keys(sources);
for (const k of kinds) if (!sources[k]) throw new Error(`unknown kind ${k}`);
const cache = cacheFile && fs.existsSync(cacheFile) ? JSON.parse(fs.readFileSync(cacheFile, 'utf8')) : {};
console.log(recallMode ? 'kind   ref     recalls  over  max    mean'
    : 'kind   ref     samples   ours      theirs    ratio  p5     median under');
for (const kind of kinds) {
    const texts = samples(kind);
    if (!texts.length) continue;
    (recallMode ? recallRows : ratioRows)(kind, texts, cache);
    if (cacheFile) fs.writeFileSync(cacheFile, JSON.stringify(cache));
}
