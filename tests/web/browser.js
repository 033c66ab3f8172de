// browser.js URL OUTDIR: drives `cairn web` in Debian's Chromium through
// playwright-core (tests/t/t0541-web-browser.sh installs it; $PW_DIR is
// where). Every page shows its content, keys and language work, forget
// works, a stored <script> never runs, a huge query is refused with a
// message. Screenshots go to OUTDIR. Prints "FAIL ..." lines, then
// "N passed, N failed".
'use strict';
const path = require('path');
const { chromium } = require(path.join(process.env.PW_DIR, 'node_modules', 'playwright-core'));

const [url, out] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(what, cond, detail) {
  if (cond) passed++;
  else { failed++; console.log(`FAIL: ${what} ${detail === undefined ? '' : JSON.stringify(detail).slice(0, 300)}`); }
}

(async () => {
  const args = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args });
  // bypassCSP: playwright's waits evaluate code in the page, which the
  // server's CSP forbids; and without the CSP, a stored <script> that
  // stays inert proves the page itself never makes markup of stored text.
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 }, locale: 'en-US', bypassCSP: true });
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  page.on('dialog', d => d.accept());
  const ready = () => page.evaluate(() => document.getElementById('main').dataset.ready || '0');
  async function go(hash) {
    const before = await ready();
    await page.evaluate(h => { location.hash = h; }, hash);
    await page.waitForFunction(b => (document.getElementById('main').dataset.ready || '0') !== b, before);
  }
  async function after(action) {
    const before = await ready();
    await action();
    await page.waitForFunction(b => (document.getElementById('main').dataset.ready || '0') !== b, before);
  }
  const text = sel => page.textContent(sel);
  const shot = name => page.screenshot({ path: path.join(out, name + '.png') });
  const pwned = () => page.evaluate(() => window.__pwned);

  // Sessions
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('main').dataset.ready);
  check('sessions: the counts', (await text('#count')) === '4 sessions, 406 messages', await text('#count'));
  const tbl = await text('#sessions');
  check('sessions: a <script> title shows as text', tbl.includes('<script>window.__pwned=1</script> deploy notes'), tbl.slice(0, 200));
  check('sessions: Chinese titles', tbl.includes('缓存策略讨论'));
  check('sessions: no element came from stored text', await page.$('#main script, #main img') === null);
  await shot('1-sessions');
  await page.keyboard.press('j');
  check('keys: j selects the first row', await page.evaluate(() => !!document.querySelector('#sessions tr.row.sel')));
  await page.keyboard.press('j');
  check('keys: j again, the second', await page.evaluate(() => document.querySelectorAll('#sessions tr.row')[1].classList.contains('sel')));
  await after(() => page.keyboard.press('Enter'));
  check('keys: Enter opens the session', (await page.evaluate(() => location.hash)).startsWith('#/session/s-long'));
  await go('#/sessions?project=gamma');
  check('sessions: filter by project', (await text('#count')).startsWith('2 sessions'), await text('#count'));

  // Chinese
  await after(() => page.click('#lang'));
  check('zh: the navigation in Chinese', (await text('#nav')).includes('会话'), await text('#nav'));
  check('zh: the counts in Chinese', (await text('#count')).includes('个会话'), await text('#count'));
  await shot('2-sessions-zh');
  await after(() => page.click('#lang'));

  // A 400-turn session, paginated
  await go('#/session/s-long?from=0');
  check('session: 100 turns a page', (await page.$$('article.msg')).length === 100);
  await after(() => page.click('a[rel=next]'));
  const first = await page.evaluate(() => document.querySelector('article.msg').id);
  check('session: the next page starts at 100', first === 'm100', first);
  await shot('3-session-long');
  await go('#/session/s-long?from=300&pos=350');
  check('session: a link to a message selects it', await page.evaluate(() => document.getElementById('m350').classList.contains('sel')));

  // A 1 MB message
  await go('#/session/s-big');
  const cut = await page.evaluate(() => document.querySelector('#m1 pre').textContent.length);
  check('session: a 1 MB message is cut', cut <= 32768, cut);
  await page.click('#m1 button');
  await page.waitForFunction(() => document.querySelector('#m1 pre').textContent.length > 1000000);
  check('session: and shown whole on demand', true);
  await shot('4-session-big');

  // Hostile session: text, never markup
  await go('#/session/s-hostile');
  check('hostile: the title is text', (await text('h1')) === '<script>window.__pwned=1</script> deploy notes', await text('h1'));
  check('hostile: the message is text', (await text('#m0 pre')).includes('<img src=x onerror='));
  check('hostile: the secret is masked', (await text('#m0 pre')).includes('[REDACTED'));
  check('hostile: no element from stored text', await page.$('#main img, #main script') === null);
  await shot('5-session-hostile');

  // Search, by keys
  await page.keyboard.press('2');
  await page.waitForFunction(() => location.hash === '#/search' && document.getElementById('main').dataset.page === 'search');
  await page.keyboard.press('/');
  check('keys: / focuses the search field', await page.evaluate(() => document.activeElement && document.activeElement.name === 'q'));
  await page.keyboard.type('Postgres migration');
  await after(() => page.keyboard.press('Enter'));
  const marks = await page.$$eval('#main mark', m => m.map(x => x.textContent));
  check('search: terms highlighted', marks.some(m => /postgres/i.test(m)), marks);
  check('search: the result shows its session', (await text('#main')).includes('deploy notes'));
  await shot('6-search');
  await go('#/search?q=' + encodeURIComponent('缓存策略'));
  check('search: Chinese highlighted', (await page.$$eval('#main mark', m => m.map(x => x.textContent))).includes('缓存'));

  // A huge query is refused with a message
  await page.fill('input[name=q]', 'x'.repeat(5000));
  await after(() => page.press('input[name=q]', 'Enter'));
  const err = await page.textContent('#main .error').catch(() => '');
  check('search: a huge query is refused with a message', /longer than 2048/.test(err || ''), err);
  await shot('7-search-huge');

  // Recall preview
  await go('#/recall?q=' + encodeURIComponent('where did the database move?') + '&budget=500&project=alpha');
  check('recall: the packed text', (await text('#packed')).includes('Postgres'));
  check('recall: tokens of the budget', /\d+ \/ 500/.test(await text('#summary')), await text('#summary'));
  check('recall: the explain view', (await page.$$('#explain tbody tr')).length > 0);
  await shot('8-recall');

  // Injections
  await go('#/injections');
  check('injections: the log', (await page.$$('#injections tbody tr')).length === 3);
  const links = await page.$$eval('#injections a.open', as => as.map(a => a.getAttribute('href')));
  check('injections: a stored prompt links to its preview', links.some(h => h.includes('q=turn+62') && h.includes('exclude=s-long')));
  check('injections: an unstored one opens that moment', links.some(h => !h.includes('q=') && h.includes('now=2024-03-02')));
  check('injections: a hostile reason is text', (await text('#injections')).includes('<script>window.__pwned=4</script>'));
  await shot('9-injections');

  // Stats
  await go('#/stats');
  check('stats: the chart', (await page.$$('svg.chart rect')).length >= 3);
  check('stats: the counts', (await text('#stats')).includes('406'));
  const stats = await text('#main');
  check('stats: vector coverage', (await text('#vectors')).includes('keyword recall only'), await text('#vectors'));
  check('stats: per project and client', stats.includes('gamma') && stats.includes('chatgpt') && !stats.includes('[object'), stats.slice(-300));
  await shot('10-stats');

  // Memories: edit
  await go('#/memories');
  check('memories: listed as text', (await text('#main')).includes('prefers <b>tabs</b>'));
  await page.click('article.msg header button.edit');
  await page.fill('article.msg textarea', 'prefers spaces');
  await after(() => page.click('article.msg textarea + button'));
  check('memories: edited', (await text('#main')).includes('prefers spaces'));
  await shot('11-memories');

  // Forget, then gone from every page
  await go('#/session/s-hostile');
  await after(() => page.click('#forget'));
  await page.waitForFunction(() => location.hash === '#/sessions' && document.getElementById('main').dataset.page === 'sessions');
  await page.waitForFunction(() => document.getElementById('count'));
  check('forget: the session is gone from the list', (await text('#count')).startsWith('3 sessions'), await text('#count'));
  await shot('12-after-forget');
  await go('#/search?q=Postgres');
  check('forget: gone from search', (await page.$$('#main article.msg')).length === 0);
  await go('#/recall?q=' + encodeURIComponent('where did the database move?') + '&budget=4000');
  check('forget: gone from recall', !(await text('#packed')).includes('Postgres'));
  await go('#/session/s-hostile?from=0');
  check('forget: the session page says so', ((await page.textContent('#main .error').catch(() => '')) || '').length > 0);

  check('a stored <script> never ran', (await pwned()) === undefined, await pwned());
  check('no script error on any page', errors.length === 0, errors);
  await browser.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + (e && e.stack || e)); console.log(`${passed} passed, ${failed + 1} failed`); process.exit(1); });
