'use strict';
// Small stand-ins for the Apps Script services safeFetch.gs uses, and a loader that runs the
// real .gs file in a vm context wired to them. Each stand-in behaves like the service where
// safeFetch depends on it: the cache expires on the fake clock, sleeping advances the clock,
// and the sheet parses strings the way Sheets parses typed input (a leading "=" is a formula,
// "007" a number) unless a cell is formatted as plain text ("@").

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const crypto = require('node:crypto');

const GS = path.join(__dirname, 'safeFetch.gs');

// A deterministic Math.random: a fixed list of values, cycled, or a seeded LCG.
function seededRandom(seedOrValues) {
  if (Array.isArray(seedOrValues)) {
    let i = 0;
    return () => seedOrValues[i++ % seedOrValues.length];
  }
  let x = (seedOrValues >>> 0) || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 4294967296;
  };
}

// An HTTPResponse stand-in.
function response(status, headers, body) {
  headers = headers || {};
  body = body == null ? '' : String(body);
  return {
    getResponseCode: () => status,
    getAllHeaders: () => Object.assign({}, headers),
    getHeaders: () => Object.assign({}, headers),
    getContentText: () => body,
  };
}

// UrlFetchApp: answers from a script, one entry per fetch: {status, headers, body} or
// {throw: 'message'}, or a function (url, params) => entry. Every fetch is recorded.
function urlFetchApp(clock) {
  const app = {
    script: [],
    requests: [],
    fetch(url, params) {
      const req = {url, params: JSON.parse(JSON.stringify(params || {})), at: clock.now};
      app.requests.push(req);
      if (!params || params.muteHttpExceptions !== true) {
        throw new Error('stand-in: safeFetch must set muteHttpExceptions: true');
      }
      if (params.followRedirects !== false) {
        throw new Error('stand-in: safeFetch must set followRedirects: false');
      }
      let e = app.script.shift();
      if (e === undefined) throw new Error('stand-in: no scripted answer for request ' + app.requests.length + ' to ' + url);
      if (typeof e === 'function') e = e(url, params);
      if (e.throw) throw new Error(e.throw);
      return response(e.status, e.headers, e.body);
    },
  };
  return app;
}

// CacheService: one script cache with expiration on the fake clock.
function cacheService(clock) {
  const store = new Map();
  const cache = {
    store,
    get(k) {
      const e = store.get(k);
      if (!e || e.expires <= clock.now) return null;
      return e.value;
    },
    put(k, v, seconds) {
      if (typeof v !== 'string') throw new Error('stand-in: CacheService stores strings');
      store.set(k, {value: v, expires: clock.now + (seconds == null ? 600 : seconds) * 1000});
    },
    remove(k) { store.delete(k); },
  };
  return {getScriptCache: () => cache, cache};
}

// Utilities: sleep advances the fake clock and is recorded; computeDigest is real SHA-256
// returning signed bytes as Apps Script does.
function utilities(clock) {
  const u = {
    sleeps: [],
    DigestAlgorithm: {SHA_256: 'SHA_256', MD5: 'MD5'},
    Charset: {UTF_8: 'UTF_8', US_ASCII: 'US_ASCII'},
    sleep(ms) {
      if (typeof ms !== 'number' || !(ms >= 0) || ms > 300000) throw new Error('stand-in: Utilities.sleep(' + ms + ') is out of range');
      u.sleeps.push(ms);
      clock.now += ms;
    },
    computeDigest(alg, value, charset) {
      if (alg !== 'SHA_256') throw new Error('stand-in: only SHA_256');
      if (charset !== 'UTF_8') throw new Error('stand-in: pass Utilities.Charset.UTF_8');
      return Array.from(crypto.createHash('sha256').update(Buffer.from(value, 'utf8')).digest(), (b) => (b > 127 ? b - 256 : b));
    },
    formatDate(date, tz, format) {
      if (tz !== 'UTC' || format !== "yyyy-MM-dd'T'HH:mm:ss'Z'") throw new Error('stand-in: formatDate only knows UTC RFC 3339');
      return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
    },
  };
  return u;
}

// A sheet: a grid of cells {v, fmt}. Writes parse strings like typed input unless the cell's
// format is "@" (and the stand-in honours it: honourTextFormat false plays a Sheets that
// ignores it, to exercise the apostrophe fallback). Every write is logged.
function sheet(name, header, opts) {
  opts = opts || {};
  const honour = opts.honourTextFormat !== false;
  // The grid's size, as Sheets keeps it: a range past the last row is an error (Apps Script:
  // "The starting row of the range is too large"); insertRowsAfter grows it.
  let maxRows = opts.maxRows || 1000;
  const grid = [header.map((h) => ({v: h, fmt: ''}))];
  const log = [];
  const cell = (r, c) => {
    while (grid.length < r) grid.push([]);
    const row = grid[r - 1];
    while (row.length < c) row.push({v: '', fmt: ''});
    return row[c - 1];
  };
  const parse = (s, fmt) => {
    if (typeof s !== 'string') return {v: s, formula: ''};
    if (s.startsWith("'")) return {v: s.slice(1), formula: ''};
    if (fmt === '@' && honour) return {v: s, formula: ''};
    if (s.startsWith('=')) return {v: '#NAME?', formula: s};
    if (/^[+-]?\d+(\.\d+)?$/.test(s)) return {v: Number(s), formula: ''};
    if (/^(true|false)$/i.test(s)) return {v: s.toLowerCase() === 'true', formula: ''};
    return {v: s, formula: ''};
  };
  const range = (r, c, nr, nc) => ({
    setNumberFormat(f) {
      log.push({op: 'setNumberFormat', r, c, nr, nc, f});
      for (let i = 0; i < nr; i++) for (let j = 0; j < nc; j++) cell(r + i, c + j).fmt = f;
      return this;
    },
    setValues(rows) {
      log.push({op: 'setValues', r, c, rows: JSON.parse(JSON.stringify(rows))});
      if (rows.length !== nr || rows.some((x) => x.length !== nc)) throw new Error('stand-in: The number of columns in the data does not match the number of columns in the range.');
      rows.forEach((row, i) => row.forEach((s, j) => {
        const k = cell(r + i, c + j);
        const p = parse(s, k.fmt);
        k.v = p.v;
        k.formula = p.formula;
      }));
      return this;
    },
    setValue(s) {
      log.push({op: 'setValue', r, c, value: s});
      const k = cell(r, c);
      const p = parse(s, k.fmt);
      k.v = p.v;
      k.formula = p.formula;
      return this;
    },
    getValues() {
      const out = [];
      for (let i = 0; i < nr; i++) {
        const row = [];
        for (let j = 0; j < nc; j++) row.push(cell(r + i, c + j).v);
        out.push(row);
      }
      return out;
    },
  });
  const s = {
    name,
    log,
    grid,
    getName: () => name,
    getLastRow() {
      for (let i = grid.length; i > 0; i--) if (grid[i - 1].some((k) => k.v !== '')) return i;
      return 0;
    },
    getLastColumn() {
      let m = 0;
      grid.forEach((row) => row.forEach((k, j) => { if (k.v !== '') m = Math.max(m, j + 1); }));
      return m;
    },
    getRange(r, c, nr, nc) {
      if (!(r >= 1 && c >= 1)) throw new Error('stand-in: getRange(' + r + ', ' + c + ') out of range');
      if (r + (nr || 1) - 1 > maxRows) throw new Error('Exception: The starting row of the range is too large.');
      return range(r, c, nr || 1, nc || 1);
    },
    getMaxRows: () => maxRows,
    insertRowsAfter(after, n) {
      log.push({op: 'insertRowsAfter', after, n});
      if (after !== maxRows) throw new Error('stand-in: only rows after the last are inserted here');
      maxRows += n;
      return s;
    },
    appendRow(values) {
      log.push({op: 'appendRow', values});
      if (s.getLastRow() + 1 > maxRows) maxRows = s.getLastRow() + 1; // appendRow grows the grid
      range(s.getLastRow() + 1, 1, 1, values.length).setValues([values]);
      return s;
    },
    // The row as a {header: value} object, and each cell's formula, for assertions.
    rowObject(r) {
      const o = {};
      grid[0].forEach((h, j) => { o[h.v] = cell(r, j + 1).v; });
      return o;
    },
    formulas(r) { return grid[0].map((_, j) => cell(r, j + 1).formula || ''); },
  };
  return s;
}

// SpreadsheetApp with one spreadsheet holding the given sheets.
function spreadsheetApp(sheets, id) {
  const ss = {getSheetByName: (n) => sheets.find((s) => s.getName() === n) || null};
  return {
    flushes: 0,
    getActiveSpreadsheet: () => ss,
    openById(x) {
      if (x !== id) throw new Error('stand-in: no spreadsheet ' + x);
      return ss;
    },
    flush() { this.flushes++; },
  };
}

function lockService() {
  let held = false;
  const lock = {
    tryLock() { if (held) return false; held = true; return true; },
    waitLock() { if (held) throw new Error('stand-in: Lock timeout'); held = true; },
    releaseLock() { held = false; },
    hasLock: () => held,
  };
  return {getScriptLock: () => lock, lock};
}

function propertiesService(props) {
  const p = Object.assign({}, props);
  return {getScriptProperties: () => ({getProperty: (k) => (k in p ? p[k] : null)})};
}

// load runs safeFetch.gs in a fresh context. opts: now (ms), random (seed or list),
// header (failed_calls header row), sheetOpts, props, config (SAFEFETCH).
function load(opts) {
  opts = opts || {};
  const clock = {now: opts.now == null ? Date.UTC(2026, 0, 15, 10, 0, 10) : opts.now};
  class FakeDate extends Date {
    constructor(...a) {
      if (a.length === 0) super(clock.now);
      else super(...a);
    }
    static now() { return clock.now; }
  }
  const random = seededRandom(opts.random == null ? 42 : opts.random);
  const math = Object.create(Math);
  math.random = random;
  const dl = sheet('failed_calls', opts.header || ['timestamp', 'source', 'url', 'payload', 'error', 'attempts', 'method', 'key', 'status', 'replayed_at'], opts.sheetOpts);
  const env = {
    clock,
    UrlFetchApp: urlFetchApp(clock),
    CacheService: cacheService(clock),
    Utilities: utilities(clock),
    SpreadsheetApp: spreadsheetApp(opts.sheets || [dl], 'SHEET-ID'),
    LockService: lockService(),
    PropertiesService: propertiesService(opts.props || {}),
    sheet: dl,
  };
  const ctx = vm.createContext({
    Date: FakeDate,
    Math: math,
    UrlFetchApp: env.UrlFetchApp,
    CacheService: env.CacheService,
    Utilities: env.Utilities,
    SpreadsheetApp: env.SpreadsheetApp,
    LockService: env.LockService,
    PropertiesService: env.PropertiesService,
  });
  vm.runInContext(fs.readFileSync(GS, 'utf8'), ctx, {filename: 'safeFetch.gs'});
  if (opts.config) ctx.SAFEFETCH = opts.config;
  env.ctx = ctx;
  return env;
}

module.exports = {load, response, seededRandom, sheet};
