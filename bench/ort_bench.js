#!/usr/bin/env node
/*
 * ort_bench.js: ONNX Runtime (npm onnxruntime-node, CPU) on the model from
 * bench/ort_export.py, measured the way bench/bench_embed.c measures cairn:
 * batch 1 x 20 tokens (p50 of 200 runs after 10 warm-ups) and 32 x 128
 * (median of 5), ids uniform in [5, 30000), all-ones mask.
 * Prints key=value lines like bench_embed.
 *
 * usage: node ort_bench.js MODEL.onnx ORT_DIR THREADS
 *   ORT_DIR: the folder whose node_modules holds onnxruntime-node
 */
'use strict';
const path = require('path');
const { createRequire } = require('module');

async function main() {
    const [model, ortDir, threadsArg] = process.argv.slice(2);
    const threads = parseInt(threadsArg || '1', 10);
    const ort = createRequire(path.join(path.resolve(ortDir), 'package.json'))('onnxruntime-node');
    const sess = await ort.InferenceSession.create(model, {
        graphOptimizationLevel: 'all', intraOpNumThreads: threads,
        interOpNumThreads: 1, executionMode: 'sequential',
    });
    const feeds = (b, s) => {
        const ids = new BigInt64Array(b * s), mask = new BigInt64Array(b * s);
        for (let i = 0; i < b * s; i++) {
            ids[i] = BigInt(5 + Math.floor(Math.random() * 29995));
            mask[i] = 1n;
        }
        return { input_ids: new ort.Tensor('int64', ids, [b, s]),
                 attention_mask: new ort.Tensor('int64', mask, [b, s]) };
    };
    const time = async (f) => { const t = process.hrtime.bigint(); await sess.run(f);
                                return Number(process.hrtime.bigint() - t) / 1e6; };
    const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
    const q = feeds(1, 20), qt = [];
    for (let i = 0; i < 10; i++) await time(q);
    for (let i = 0; i < 200; i++) qt.push(await time(q));
    const p50 = median(qt);
    console.log(`bench=ort threads=${threads} batch=1 seq=20 ms_p50=${p50.toFixed(3)} tokens_per_s=${(20000 / p50).toFixed(0)}`);
    const bf = feeds(32, 128), bt = [];
    await time(bf);
    for (let i = 0; i < 5; i++) bt.push(await time(bf));
    const bm = median(bt);
    console.log(`bench=ort threads=${threads} batch=32 seq=128 ms_p50=${bm.toFixed(1)} tokens_per_s=${(4096000 / bm).toFixed(0)}`);
}

main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
