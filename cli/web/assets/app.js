/* cairn web: the page. Every stored string reaches the page through
 * text nodes (el() below, textContent): never as HTML, so a message that
 * holds <script> shows as those characters. The API is ./api/..., under
 * this run's token (the page's own address). */
'use strict';

const I18N = {
  en: {
    sessions: 'Sessions', search: 'Search', recall: 'Recall preview', injections: 'Injections',
    stats: 'Stats', memories: 'Memories', project: 'Project', source: 'Client', from: 'From',
    to: 'To', text: 'Text', filter: 'Filter', started: 'Started', messages: 'Messages',
    title: 'Title', session: 'Session', prev: '← Previous', next: 'Next →',
    nSessions: (n, m) => `${n} sessions, ${m} messages`, export: 'Export', forget: 'Forget',
    confirmForget: id => `Forget session "${id}"? Its messages and everything indexed from them are deleted and wiped. This cannot be undone.`,
    forgotten: 'Forgotten.', showAll: n => `Show the whole message (${n} bytes)`,
    position: 'Position', question: 'Question', budget: 'Budget', now: 'Now', method: 'Method',
    run: 'Go', tokens: 'tokens', packed: 'The packed text', explain: 'Why each item',
    rank: 'Rank', score: 'Score', why: 'Why', role: 'Role', at: 'At', gate: 'Hook gate',
    match: 'Match', mode: 'Mode', keyword: 'keyword', hybrid: 'hybrid', results: n => `${n} results`,
    exportResults: 'Export results', fired: 'Fired', items: 'Items', ms: 'ms',
    noPrompt: 'The log keeps no prompt text (privacy); "Preview" finds the prompt in its saved session and asks it as the hook did (that moment, that session left out, the default budget); "At that moment" opens an empty preview when the session is not stored.',
    preview: 'Preview', previewAt: 'At that moment', exclude: 'Leave out session', store: 'Store', file: 'File', period: 'Period',
    perMonth: 'Messages per month (by session start)', perProject: 'Per project', perSource: 'Per client',
    vectors: 'Messages with a vector, per model', noVectors: 'No vectors: keyword recall only (cairn embed --backfill)',
    type: 'Type', scope: 'Scope', edit: 'Edit', supersede: 'Supersede', save: 'Save', cancel: 'Cancel', del: 'Delete',
    confirmDel: id => `Delete memory ${id} and its history?`, none: 'Nothing here.',
    empty: '(none)', keys: 'Keys: 1–6 pages, j/k move, Enter opens, / search field', lang: '中文',
    goto: 'Go to position', whole: 'whole', excerpt: 'excerpt', log: 'Log',
    as: 'As', asRecall: 'cairn recall', asHook: 'the prompt hook',
  },
  zh: {
    sessions: '会话', search: '搜索', recall: '回忆预览', injections: '注入记录',
    stats: '统计', memories: '记忆', project: '项目', source: '客户端', from: '从',
    to: '到', text: '文字', filter: '筛选', started: '开始时间', messages: '消息',
    title: '标题', session: '会话', prev: '← 上一页', next: '下一页 →',
    nSessions: (n, m) => `${n} 个会话，${m} 条消息`, export: '导出', forget: '遗忘',
    confirmForget: id => `遗忘会话“${id}”？它的消息及所有索引将被删除并抹除，无法撤销。`,
    forgotten: '已遗忘。', showAll: n => `显示整条消息（${n} 字节）`,
    position: '位置', question: '问题', budget: '预算', now: '当前时间', method: '方法',
    run: '执行', tokens: '词元', packed: '打包后的文本', explain: '每一项的理由',
    rank: '排名', score: '分数', why: '理由', role: '角色', at: '时间', gate: '钩子门槛',
    match: '匹配', mode: '模式', keyword: '关键词', hybrid: '混合', results: n => `${n} 条结果`,
    exportResults: '导出结果', fired: '已注入', items: '条目', ms: '毫秒',
    noPrompt: '日志不保存提示文本（隐私）；“预览”从已保存的会话中找到该提示，并像钩子那样提问（当时的时间，排除该会话，默认预算）；会话未保存时，“当时”打开空白预览。',
    preview: '预览', previewAt: '当时', exclude: '排除会话', store: '存储', file: '文件', period: '时间段',
    perMonth: '每月消息数（按会话开始时间）', perProject: '按项目', perSource: '按客户端',
    vectors: '有向量的消息（按模型）', noVectors: '没有向量：仅关键词检索（cairn embed --backfill）',
    type: '类型', scope: '范围', edit: '编辑', supersede: '取代', save: '保存', cancel: '取消', del: '删除',
    confirmDel: id => `删除记忆 ${id} 及其历史？`, none: '这里什么都没有。',
    empty: '（无）', keys: '按键：1–6 切换页面，j/k 移动，回车打开，/ 搜索框', lang: 'English',
    goto: '跳到位置', whole: '完整', excerpt: '摘录', log: '日志',
    as: '方式', asRecall: 'cairn recall', asHook: '提示钩子',
  },
};
let lang = localStorage.getItem('cairn.lang') ||
  (navigator.language && navigator.language.startsWith('zh') ? 'zh' : 'en');
const t = (k, ...a) => { const v = I18N[lang][k]; return typeof v === 'function' ? v(...a) : v; };

const PAGES = ['sessions', 'search', 'recall', 'injections', 'stats', 'memories'];

/* An element with attributes and children; strings become text nodes. */
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of kids.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fail(msg) { return el('div', { class: 'error', role: 'alert' }, msg); }

async function api(path, params, body) {
  const qs = params ? '?' + new URLSearchParams(
    Object.entries(params).filter(([, v]) => v !== undefined && v !== '')) : '';
  const opt = body ? { method: 'POST', headers: { 'Content-Type': 'application/json' },
                       body: JSON.stringify(body) } : {};
  const r = await fetch('api/' + path + qs, opt);
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON: MHD's own refusals */ }
  if (!r.ok) throw new Error((j && j.error) || `HTTP ${r.status}`);
  return j;
}

function apiUrl(path, params) {
  return 'api/' + path + '?' + new URLSearchParams(params);
}

/* #/page?k=v -> { page, args } */
function route() {
  const h = location.hash.replace(/^#\/?/, '');
  const [p, q] = h.split('?');
  const parts = p.split('/');
  return { page: parts[0] || 'sessions', rest: parts.slice(1).map(decodeURIComponent),
           args: new URLSearchParams(q || '') };
}
function href(page, args) {
  const q = args ? new URLSearchParams(Object.entries(args).filter(([, v]) => v !== undefined && v !== '')).toString() : '';
  return '#/' + page + (q ? '?' + q : '');
}
function sessionHref(id, pos) {
  const from = pos ? Math.floor(pos / 100) * 100 : 0;
  return '#/session/' + encodeURIComponent(id) + '?' + new URLSearchParams({ from, pos: pos || 0 });
}

function date(s) { return s ? s.replace('T', ' ').replace('Z', '') : ''; }

/* A form bar of labelled fields; submit navigates to page with its values. */
function formBar(page, fields, args) {
  const f = el('form', { class: 'bar', role: 'search' });
  for (const [name, label, type, extra] of fields) {
    let input;
    if (type === 'select') {
      input = el('select', { name }, extra.map(([v, l]) => el('option', { value: v, selected: args.get(name) === v }, l)));
    } else {
      input = el('input', { name, type: type || 'text', value: args.get(name) || (extra || '') });
    }
    f.append(el('label', {}, label, input));
  }
  f.append(el('button', { type: 'submit' }, t('run')));
  f.addEventListener('submit', ev => {
    ev.preventDefault();
    const o = {};
    for (const [k, v] of new FormData(f)) o[k] = v;
    location.hash = href(page, o);
  });
  return f;
}

/* ---- pages ---- */

async function pageSessions(main, { args }) {
  const offset = +(args.get('offset') || 0);
  main.append(el('h1', {}, t('sessions')),
    formBar('sessions', [['project', t('project')], ['source', t('source')],
      ['from', t('from'), 'date'], ['to', t('to'), 'date'], ['text', t('text')]], args));
  const q = Object.fromEntries(args);
  const j = await api('sessions', { ...q, offset, limit: 50 });
  main.append(el('p', { class: 'muted', id: 'count' }, t('nSessions', j.total, j.messages)));
  const chips = (list, key) => el('div', { class: 'chips' }, list.map(([n, c]) =>
    el('a', { class: 'chip', href: href('sessions', { ...q, [key]: n, offset: 0 }) }, `${n || t('empty')} · ${c}`)));
  main.append(chips(j.projects, 'project'), chips(j.sources, 'source'));
  const rows = j.sessions.map(s => el('tr', { class: 'row' },
    el('td', {}, date(s.started_at)), el('td', { class: 'num' }, s.messages),
    el('td', {}, s.source || ''), el('td', {}, s.project || ''),
    el('td', {}, el('a', { href: sessionHref(s.id), class: 'open' }, s.title || s.id),
      el('div', { class: 'muted' }, s.id))));
  main.append(el('table', { id: 'sessions' },
    el('thead', {}, el('tr', {}, [t('started'), t('messages'), t('source'), t('project'), t('title')]
      .map((h, i) => el('th', { class: i === 1 ? 'num' : '' }, h)))),
    el('tbody', {}, rows)));
  if (!j.sessions.length) main.append(el('p', {}, t('none')));
  main.append(pager('sessions', q, offset, 50, j.total));
}

function pager(page, q, offset, step, total, key = 'offset') {
  return el('div', { class: 'pager' },
    offset > 0 ? el('a', { href: href(page, { ...q, [key]: Math.max(0, offset - step) }) }, t('prev')) : '',
    el('span', { class: 'muted' }, `${Math.min(total, offset + 1)}–${Math.min(total, offset + step)} / ${total}`),
    offset + step < total ? el('a', { href: href(page, { ...q, [key]: offset + step }), rel: 'next' }, t('next')) : '');
}

async function forgetSession(id) {
  if (!confirm(t('confirmForget', id))) return false;
  await api('forget', null, { session: id, confirm: id });
  status(t('forgotten'));
  return true;
}

async function pageSession(main, { rest, args }) {
  const id = rest[0];
  const from = +(args.get('from') || 0), pos = args.get('pos');
  const j = await api('session', { id, from, count: 100 });
  const s = j.session;
  main.append(el('h1', {}, s.title || s.id),
    el('dl', { class: 'kv' },
      el('dt', {}, t('session')), el('dd', {}, s.id),
      el('dt', {}, t('project')), el('dd', {}, s.project || t('empty')),
      el('dt', {}, t('source')), el('dd', {}, s.source || t('empty')),
      el('dt', {}, t('started')), el('dd', {}, date(s.started_at)),
      el('dt', {}, t('messages')), el('dd', {}, s.messages)),
    el('div', { class: 'pager' },
      el('a', { href: apiUrl('export', { session: s.id }), download: 'cairn-session.jsonl' }, t('export')),
      el('button', { class: 'danger', type: 'button', id: 'forget', onclick: async () => {
        try { if (await forgetSession(s.id)) location.hash = '#/sessions'; }
        catch (e) { main.prepend(fail(e.message)); } } }, t('forget'))));
  const nav = () => el('div', { class: 'pager' },
    from > 0 ? el('a', { href: '#/session/' + encodeURIComponent(id) + '?from=' + Math.max(0, from - 100) }, t('prev')) : '',
    el('span', { class: 'muted' }, `${from}–${Math.min(s.messages, from + 100) - 1} / ${s.messages}`),
    from + 100 < s.messages ? el('a', { href: '#/session/' + encodeURIComponent(id) + '?from=' + (from + 100), rel: 'next' }, t('next')) : '');
  main.append(nav());
  for (const m of j.messages) {
    const pre = el('pre', {}, m.content || '');
    const box = el('article', { class: 'msg row ' + (m.role || ''), id: 'm' + m.position, tabindex: '-1' },
      el('header', {},
        el('a', { href: sessionHref(id, m.position), title: t('position') }, '#' + m.position),
        el('strong', {}, m.role || ''), m.speaker ? el('span', {}, m.speaker) : '',
        el('span', { class: 'muted' }, date(m.at)),
        m.id ? el('span', { class: 'muted' }, m.id) : ''),
      pre);
    if (m.truncated) {
      box.append(el('button', { type: 'button', onclick: async ev => {
        const w = await api('message', { session: id, position: m.position });
        pre.textContent = w.messages[0].content;
        ev.target.remove();
      } }, t('showAll', m.content_len)));
    }
    main.append(box);
  }
  main.append(nav());
  if (pos === null) return null;
  const target = main.querySelector('#m' + CSS.escape(pos));
  if (!target) return null;
  target.classList.add('sel');
  return () => target.scrollIntoView({ block: 'start' });  /* once it is on the page */
}

/* The query's words, for highlighting: words of 2+ letters, and each pair
 * of CJK characters (the store's bigrams). */
function terms(q) {
  const out = new Set();
  for (const w of q.toLowerCase().split(/[\s\p{P}]+/u)) {
    if (!w) continue;
    const cjk = w.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu) || [];
    for (const run of cjk) {
      if (run.length === 1) out.add(run);
      for (let i = 0; i + 1 < run.length; i++) out.add(run.slice(i, i + 2));
    }
    const latin = w.replace(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu, ' ');
    for (const x of latin.split(' ')) if (x.length >= 2) out.add(x);
  }
  return [...out];
}

/* text as nodes with each term in a <mark> (text nodes only). */
function highlight(text, words) {
  if (!words.length) return [text];
  const re = new RegExp(words.map(w => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'giu');
  const out = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    out.push(text.slice(last, m.index), el('mark', {}, m[0]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

async function pageSearch(main, { args }) {
  main.append(el('h1', {}, t('search')),
    formBar('search', [['q', t('question')], ['mode', t('mode'), 'select',
      [['keyword', t('keyword')], ['hybrid', t('hybrid')]]], ['project', t('project')]], args));
  const q = args.get('q');
  if (!q) return;
  const params = { q, project: args.get('project') || '', method: args.get('mode') === 'hybrid' ? 'hybrid' : 'keyword' };
  const j = await api('search', params);
  const words = terms(q);
  main.append(el('p', { class: 'muted', id: 'count' }, t('results', j.results.length), ' · ',
    el('a', { href: apiUrl('search', { ...params, download: 1 }), download: 'cairn-search.json' }, t('exportResults'))));
  for (const r of j.results) {
    main.append(el('article', { class: 'msg row ' + (r.role || '') },
      el('header', {},
        el('a', { href: sessionHref(r.session, r.position), class: 'open' }, r.title || r.session),
        el('strong', {}, r.role || ''), el('span', { class: 'muted' }, date(r.at)),
        el('span', { class: 'muted' }, r.project || '')),
      el('pre', {}, highlight(r.content || '', words),
        r.content_len > (r.content || '').length ? ' …' : '')));
  }
  if (!j.results.length) main.append(el('p', {}, t('none')));
}

async function pageRecall(main, { args }) {
  main.append(el('h1', {}, t('recall')),
    formBar('recall', [['q', t('question')], ['budget', t('budget'), 'number', '2000'],
      ['now', t('now'), 'datetime-local'], ['project', t('project')],
      ['method', t('method'), 'select', [['cairn', 'cairn'], ['keyword', 'keyword'], ['raw-bm25', 'raw-bm25'], ['no-time', 'no-time']]],
      ['hook', t('as'), 'select', [['0', t('asRecall')], ['1', t('asHook')]]],
      ['exclude', t('exclude')]], args));
  const q = args.get('q');
  if (!q) return;
  const j = await api('recall', { q, budget: args.get('budget') || 2000, now: args.get('now') || '',
                                   project: args.get('project') || '', method: args.get('method') || '',
                                   hook: args.get('hook') || '', exclude: args.get('exclude') || '' });
  main.append(el('dl', { class: 'kv', id: 'summary' },
    el('dt', {}, t('tokens')), el('dd', {}, `${j.tokens} / ${j.budget}`),
    el('dt', {}, t('match')), el('dd', {}, `${j.match} (${j.match_weight}), dense ${j.dense}`),
    el('dt', {}, t('gate')), el('dd', {}, el('span', { class: j.gate ? 'yes' : 'no' }, j.gate ? '✓' : '✗'), ' ', j.gate_why),
    j.note ? [el('dt', {}, 'note'), el('dd', {}, j.note)] : ''));
  main.append(el('h2', {}, t('packed')), el('pre', { class: 'text', id: 'packed' }, j.text));
  main.append(el('h2', {}, t('explain')), el('table', { id: 'explain' },
    el('thead', {}, el('tr', {}, [t('rank'), t('score'), t('session'), t('role'), t('at'), t('why')].map(h => el('th', {}, h)))),
    el('tbody', {}, j.items.map(it => el('tr', { class: 'row' },
      el('td', { class: 'num' }, it.rank), el('td', { class: 'num' }, it.score.toFixed(4)),
      el('td', {}, el('a', { href: sessionHref(it.session, it.position), class: 'open' }, `${it.session} #${it.position}`),
        it.excerpt ? el('div', { class: 'muted' }, t('excerpt')) : ''),
      el('td', {}, it.role || ''), el('td', {}, date(it.at)), el('td', {}, it.why || ''))))));
}

/* The preview of a logged prompt: the prompt itself when the store holds
 * it (the API finds it in the saved session), else that moment only. */
function injectionArgs(e) {
  const a = { now: (e.at || '').replace('Z', '').slice(0, 16), hook: 1, budget: 1000 };
  if (e.prompt) Object.assign(a, { q: e.prompt, exclude: e.session });
  return a;
}

async function pageInjections(main) {
  const j = await api('injections', { limit: 500 });
  main.append(el('h1', {}, t('injections')), el('p', { class: 'muted' }, t('log'), ': ', j.log, ' · ', t('noPrompt')));
  main.append(el('table', { id: 'injections' },
    el('thead', {}, el('tr', {}, [t('at'), t('session'), t('fired'), t('why'), t('match'), t('items'), t('tokens'), t('ms'), ''].map(h => el('th', {}, h)))),
    el('tbody', {}, j.entries.map(e => el('tr', { class: 'row' },
      el('td', {}, date(e.at)), el('td', {}, e.session || ''),
      el('td', {}, el('span', { class: e.fired ? 'yes' : 'no' }, e.fired ? '✓' : '✗')),
      el('td', {}, e.why || ''), el('td', { class: 'num' }, e.match !== undefined ? `${e.match} (${e.match_weight})` : ''),
      el('td', { class: 'num' }, e.items ?? ''), el('td', { class: 'num' }, e.tokens ?? ''),
      el('td', { class: 'num' }, e.ms ?? ''),
      el('td', {}, el('a', { href: href('recall', injectionArgs(e)), class: 'open' }, t(e.prompt ? 'preview' : 'previewAt'))))))));
  if (!j.entries.length) main.append(el('p', {}, t('none')));
}

/* Bars of [label, n], as SVG built node by node. */
function chart(data) {
  const NS = 'http://www.w3.org/2000/svg';
  const W = 720, H = 200, pad = 24;
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  const max = Math.max(1, ...data.map(d => d[1]));
  const bw = (W - 2 * pad) / Math.max(1, data.length);
  data.forEach(([label, n], i) => {
    const h = (H - 2 * pad) * n / max;
    const r = document.createElementNS(NS, 'rect');
    r.setAttribute('x', pad + i * bw + 1); r.setAttribute('y', H - pad - h);
    r.setAttribute('width', Math.max(1, bw - 2)); r.setAttribute('height', h);
    const tt = document.createElementNS(NS, 'title'); tt.textContent = `${label}: ${n}`; r.append(tt);
    svg.append(r);
    if (data.length <= 24 || i % Math.ceil(data.length / 12) === 0) {
      const tx = document.createElementNS(NS, 'text');
      tx.setAttribute('x', pad + i * bw); tx.setAttribute('y', H - 6); tx.textContent = label;
      svg.append(tx);
    }
  });
  return svg;
}

async function pageStats(main) {
  const j = await api('stats');
  const months = j.months.slice().sort((a, b) => a[0] < b[0] ? -1 : 1);
  const list = (title, rows) => [el('h2', {}, title), el('table', {}, el('tbody', {},
    rows.slice().sort((a, b) => b[1] - a[1]).map(([n, c]) => el('tr', {}, el('td', {}, n || t('empty')), el('td', { class: 'num' }, c)))))];
  main.append(el('h1', {}, t('stats')), el('dl', { class: 'kv', id: 'stats' },
    el('dt', {}, t('store')), el('dd', {}, j.store),
    el('dt', {}, t('sessions')), el('dd', {}, j.sessions),
    el('dt', {}, t('messages')), el('dd', {}, `${j.messages} (${j.user_messages} user, ${j.assistant_messages} assistant)`),
    el('dt', {}, t('file')), el('dd', {}, `${(j.file_bytes / 1e6).toFixed(1)} MB; text ${(j.content_bytes / 1e6).toFixed(1)} MB`),
    el('dt', {}, t('period')), el('dd', {}, `${date(j.first)} – ${date(j.last)}`)),
    el('h2', {}, t('perMonth')), chart(months), ...list(t('perProject'), j.projects), ...list(t('perSource'), j.sources),
    el('h2', {}, t('vectors')), el('table', { id: 'vectors' }, el('tbody', {},
      j.vectors.length ? j.vectors.map(([model, n]) => el('tr', {}, el('td', {}, model), el('td', { class: 'num' }, n),
        el('td', { class: 'num' }, `${(100 * n / Math.max(1, j.messages)).toFixed(1)}%`)))
        : el('tr', {}, el('td', {}, t('noVectors'))))));
}

async function pageMemories(main, { args }) {
  const j = await api('memories', { scope: args.get('scope') || '' });
  main.append(el('h1', {}, t('memories')), formBar('memories', [['scope', t('scope')]], args));
  for (const m of j.memories) {
    const text = el('pre', {}, m.text);
    const box = el('article', { class: 'msg row', id: 'mem' + m.id },
      el('header', {}, el('strong', {}, '#' + m.id), el('span', {}, m.type || ''),
        el('span', { class: 'muted' }, m.scope || 'global'), el('span', { class: 'muted' }, date(m.updated || m.created)),
        ...['edit', 'supersede'].map(action => el('button', { type: 'button', class: action, onclick: () => {
          /* edit keeps the old text in the history; supersede adds a new
             memory that replaces this one (docs/MEMORIES.md) */
          const ta = el('textarea', {}, m.text);
          const save = el('button', { type: 'button', onclick: async () => {
            try { await api('memory/' + action, null, { id: m.id, text: ta.value }); render(); }
            catch (e) { box.append(fail(e.message)); } } }, t('save'));
          text.replaceWith(el('div', {}, ta, save)); ta.focus();
        } }, t(action))),
        el('button', { type: 'button', class: 'danger', onclick: async () => {
          if (!confirm(t('confirmDel', m.id))) return;
          try { await api('memory/rm', null, { id: m.id, confirm: m.id }); render(); }
          catch (e) { box.append(fail(e.message)); } } }, t('del'))),
      text);
    main.append(box);
  }
  if (!j.memories.length) main.append(el('p', {}, t('none')));
}

const HANDLERS = { sessions: pageSessions, session: pageSession, search: pageSearch, recall: pageRecall,
                   injections: pageInjections, stats: pageStats, memories: pageMemories };

function status(msg) { document.getElementById('status').textContent = msg; }

function drawNav(page) {
  const nav = document.getElementById('nav');
  nav.replaceChildren(...PAGES.map((p, i) => el('a', { href: '#/' + p, class: p === page || (p === 'sessions' && page === 'session') ? 'on' : '' },
    t(p), el('kbd', {}, i + 1))));
  const b = document.getElementById('lang');
  b.textContent = t('lang');
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  document.title = 'cairn · ' + t(page === 'session' ? 'session' : page) ;
}

let seq = 0;
async function render() {
  const r = route();
  const main = document.getElementById('main');
  const mine = ++seq;
  drawNav(r.page);
  const box = el('div', {});
  let then = null;
  try {
    then = await (HANDLERS[r.page] || pageSessions)(box, r);
  } catch (e) {
    box.append(fail(e.message));
  }
  if (mine !== seq) return;
  box.append(el('p', { class: 'muted' }, t('keys')));
  main.replaceChildren(box);
  if (typeof then === 'function') then();
  main.dataset.page = r.page;
  main.dataset.ready = String(mine);
}

/* ---- keyboard ---- */

function moveSel(d) {
  const rows = [...document.querySelectorAll('#main .row')];
  if (!rows.length) return;
  let i = rows.findIndex(r => r.classList.contains('sel'));
  if (i >= 0) rows[i].classList.remove('sel');
  i = Math.max(0, Math.min(rows.length - 1, i + d));
  rows[i].classList.add('sel');
  rows[i].scrollIntoView({ block: 'nearest' });
  const a = rows[i].querySelector('a.open') || rows[i];
  a.focus({ preventScroll: true });
}

document.addEventListener('keydown', ev => {
  const tag = (ev.target.tagName || '').toLowerCase();
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (tag === 'input' || tag === 'textarea' || tag === 'select') {
    if (ev.key === 'Escape') ev.target.blur();
    return;
  }
  if (ev.key >= '1' && ev.key <= String(PAGES.length)) location.hash = '#/' + PAGES[+ev.key - 1];
  else if (ev.key === 'j') moveSel(1);
  else if (ev.key === 'k') moveSel(-1);
  else if (ev.key === '/') {
    const f = document.querySelector('#main input');
    if (f) { ev.preventDefault(); f.focus(); }
  } else return;
});

document.getElementById('lang').addEventListener('click', () => {
  lang = lang === 'en' ? 'zh' : 'en';
  localStorage.setItem('cairn.lang', lang);
  render();
});
window.addEventListener('hashchange', render);
render();
