/**
 * safeFetch.gs: the triage client's contract for callers in Google Apps Script.
 *
 * An outbound call that fails must never vanish (seed 003), must never be acted on twice
 * (seed 000), and must be sorted into the right tier (seed 001). safeFetch does for one call
 * what `triage replay` does for a dead-letter row, with the same outcome table, so the row
 * it leaves behind can be replayed later by triage with the same key:
 *
 *   - an idempotency key in the `Idempotency-Key` header (and, if configured, in a JSON body
 *     field), kept across every attempt;
 *   - the outcome table of triage (DESIGN §5): 2xx delivered (`Idempotent-Replayed: true`:
 *     duplicate), 419 duplicate, 3xx systemic and never followed, 400 401 403 404 405 422
 *     systemic, 408 409 425 429 5xx and exceptions (timeouts, DNS) retryable, any other 4xx
 *     rejected; the `apps-script` preset for an Apps Script web app as destination;
 *   - full-jitter backoff uniform(0, min(30 s, 1 s * 2^(n-1))), `Retry-After` honoured up to
 *     30 s (a longer wait defers the call to the dead-letter queue instead of waiting);
 *   - a per-source limit of requests per minute (CacheService, shared by all executions);
 *   - calls that end retryable (attempts exhausted), deferred, systemic or rejected are
 *     appended to the `failed_calls` tab, with the key that was sent.
 *
 * INSTALL
 *   1. Paste this file into the script editor (Extensions > Apps Script > + > Script) of the
 *      spreadsheet that holds `failed_calls`, or of any project (then set
 *      SAFEFETCH.deadLetter.spreadsheetId). V8 runtime (the default).
 *   2. Edit SAFEFETCH below: one entry per source, with the URL prefixes it may call.
 *   3. Secrets never go in code: a header value "prop:NAME" is read from Script Properties
 *      (Project Settings > Script Properties) at send time. A missing property is systemic:
 *      nothing is sent and the call is dead-lettered saying which property to set.
 *   4. The `failed_calls` tab must exist with a header row naming (any order, any case, extra
 *      columns allowed) timestamp, source, url, payload, error, attempts, method, key, status.
 *      `triage init` adds missing header cells; safeFetch creates nothing. If your triage
 *      config renames columns under [tabs.deadletter.columns], copy those lines into
 *      SAFEFETCH.deadLetter.columns (key = "Idempotency Key" becomes
 *      columns: {key: 'Idempotency Key'}): then both write and read the same columns.
 *   5. Call it:  var r = safeFetch('crm', 'https://api.example.com/v1/orders',
 *                                  {method: 'post', payload: JSON.stringify(order)});
 *                if (!r.ok) { ... r.outcome, r.error; the call is in failed_calls ... }
 *
 * THE CONTRACT WITH TRIAGE
 *   The key in the dead-letter row's `key` cell is exactly the key that was sent, and the
 *   `payload` cell is exactly the body that was sent, so `triage replay` carries the same key
 *   and the receiver acts at most once however many times the call is replayed. The key is:
 *   options.key; else the payload's key field (`id` by default, as in seed 000: a string,
 *   trimmed, or a number's literal text, as triage reads it); else one minted from the call,
 *   "triage-" + the first 32 hex digits of SHA-256(source NUL url NUL payload NUL NUL), which is
 *   triage's MintKey with an empty timestamp. A minted key makes two calls with the same
 *   source, url and body the same call: when that is not what you mean, give a key. Because
 *   the key is always written to the row, triage never has to mint one later.
 *
 * LIMITS (Apps Script's, not ours)
 *   UrlFetchApp has no per-request timeout (it gives up after about 60 s and throws: that is
 *   retryable). An execution lasts at most 6 minutes: keep max attempts and the per-minute
 *   rate such that a run fits, and let triage replay what is left.
 */

/**
 * The configuration. Edit this (it is the only thing you need to edit).
 *
 * sources.<name>:
 *   urlPrefixes      the only URLs this source may call (scheme://host/path; a path not
 *                    ending in "/" matches on a segment boundary). Required.
 *   preset           'rest' (default) or 'apps-script' (the destination is an Apps Script web
 *                    app: its 302 to script.googleusercontent.com is followed once as a GET,
 *                    the JSON {"ok":true|false} answer decides, 404 is retryable).
 *   maxAttempts      requests per call (default 3; apps-script 2).
 *   ratePerMinute    requests per minute for this source across all executions (0: none).
 *   keyField         the payload field that holds the key (default 'id'; '' for none).
 *   bodyKeyField     also put the key into this top-level field of a JSON body where it is
 *                    absent (an Apps Script web app can't read request headers).
 *   headers          {Name: 'value' | 'prop:SCRIPT_PROPERTY'}.
 *   redirectPrefixes apps-script only (default ['https://script.googleusercontent.com/']).
 *   overrides        {'404': 'retryable', 'network': 'systemic', ...}: the table, per source.
 * deadLetter:
 *   spreadsheetId    '' = the spreadsheet this script is bound to.
 *   sheetName        default 'failed_calls' (triage's [tabs.deadletter] name).
 *   columns          header names that differ from the defaults, exactly as in triage's
 *                    [tabs.deadletter.columns]: {field: 'Header name'}, e.g.
 *                    {key: 'Idempotency Key', url: 'Endpoint URL'}. Fields: timestamp, source,
 *                    url, payload, error, attempts, method, key, status (and replayed_at,
 *                    triaged_by, triaged_at, which safeFetch leaves empty). A renamed field is
 *                    found by that header only (case and spacing aside), never by an alias,
 *                    as triage finds it. A mapping triage's `config check` would refuse (an
 *                    unknown field, a blank name, two fields on one header, a field on another
 *                    column's default header) throws before anything is sent.
 *   on               which outcomes are dead-lettered (default all four).
 */
var SAFEFETCH = {
  sources: {
    // 'crm': {
    //   urlPrefixes: ['https://api.example.com/v1/'],
    //   maxAttempts: 3,
    //   ratePerMinute: 60,
    //   headers: {Authorization: 'prop:CRM_TOKEN'},
    // },
    // 'contact-form': {
    //   preset: 'apps-script',
    //   urlPrefixes: ['https://script.google.com/macros/s/'],
    //   bodyKeyField: 'id',
    //   ratePerMinute: 30,
    // },
  },
  deadLetter: {
    spreadsheetId: '',
    sheetName: 'failed_calls',
    // The same lines as triage's [tabs.deadletter.columns], e.g.:
    //   key: 'Idempotency Key',
    columns: {},
    on: ['retryable', 'deferred', 'systemic', 'rejected'],
  },
};

/** Backoff base and cap, in milliseconds (DESIGN §5: base 1 s, cap 30 s). */
var SAFEFETCH_BASE_MS = 1000;
var SAFEFETCH_CAP_MS = 30000;
/** A cell holds at most 50,000 characters; destination text is capped well below. */
var SAFEFETCH_MAX_TEXT = 500;
var SAFEFETCH_MAX_CELL = 50000;

/**
 * Sends one call and returns what happened:
 *   {ok, outcome, deferred, status, key, attempts, error, response, deadLettered}
 * ok is true for delivered and duplicate; outcome is 'delivered', 'duplicate', 'rejected',
 * 'systemic' or 'retryable'; response is the last HTTPResponse (null after an exception).
 * A call that can't be sent at all because of a programming or configuration error (unknown
 * source, URL not allowed, a key no header can carry, two different keys) throws: nothing was
 * sent, and a dead-letter row for it could never be replayed either.
 *
 * options: method (default 'post'), payload (a string, sent and stored byte for byte; a plain
 * object is sent as JSON), contentType, headers, key, and deadLetter: false to skip the
 * dead-letter row for this call.
 */
function safeFetch(source, url, options) {
  options = options || {};
  var src = safeFetchSource_(source);
  url = String(url == null ? '' : url).trim();
  var why = safeFetchUrlRefusal_(url, src.urlPrefixes);
  if (why) {
    throw new Error('safeFetch: source ' + source + ': ' + why + '; not contacted');
  }
  var method = String(options.method || 'post').trim().toUpperCase();
  if (!/^[A-Z]+$/.test(method)) {
    throw new Error('safeFetch: method ' + JSON.stringify(method) + ' is not an HTTP method');
  }
  var contentType = options.contentType;
  var payload = options.payload;
  if (payload == null) {
    payload = '';
  } else if (typeof payload.getBytes === 'function') {
    throw new Error('safeFetch: payload is a Blob: pass the text (blob.getDataAsString()) so the dead-letter row can hold the exact body');
  } else if (Object.prototype.toString.call(payload) === '[object Object]') {
    payload = JSON.stringify(payload);
    contentType = contentType || 'application/json';
  } else if (typeof payload !== 'string') {
    throw new Error('safeFetch: payload must be a string (or a plain object sent as JSON): ' +
      'the dead-letter row must hold the exact body that was sent');
  }
  var callHeaders = {};
  var headerKey = '';
  Object.keys(options.headers || {}).forEach(function (name) {
    if (name.toLowerCase() === 'idempotency-key') {
      headerKey = safeFetchTrim_(String(options.headers[name]));
    } else {
      callHeaders[name] = String(options.headers[name]);
    }
  });
  var given = options.key != null && safeFetchTrim_(String(options.key)) !== '' ? safeFetchTrim_(String(options.key)) : headerKey;
  var key = safeFetchKey_(source, src, url, payload, given);
  var body = payload;
  if (src.bodyKeyField) {
    body = safeFetchWithBodyKey_(payload, src.bodyKeyField, key);
  }

  // A column mapping triage would refuse is a configuration error: found before sending, so
  // a call that fails can always be recorded where triage reads it.
  safeFetchColumnMapping_();
  if (body.length > SAFEFETCH_MAX_CELL) {
    // Checked before sending: once sent, a call that fails must fit its dead-letter row whole
    // (a shortened payload would change what a replay sends).
    throw new Error('safeFetch: the payload is ' + body.length + ' characters and a dead-letter cell holds ' + SAFEFETCH_MAX_CELL + ': a failed call could not be recorded; not sent');
  }
  var call = {source: source, url: url, method: method, payload: body, key: key};
  var result = safeFetchSend_(src, call, callHeaders, contentType || (body ? 'application/json' : ''));
  result.key = key;
  result.ok = result.outcome === 'delivered' || result.outcome === 'duplicate';
  result.deadLettered = false;
  var what = result.deferred ? 'deferred' : result.outcome;
  if (!result.ok && options.deadLetter !== false && safeFetchDeadLetterOn_().indexOf(what) >= 0) {
    appendToDeadLetterQueue(call, result);
    result.deadLettered = true;
  }
  return result;
}

/** The configured source, with its defaults applied. */
function safeFetchSource_(name) {
  var s = (SAFEFETCH.sources || {})[name];
  if (!s) {
    throw new Error('safeFetch: source ' + JSON.stringify(name) + ' is not configured: add it to SAFEFETCH.sources with its urlPrefixes');
  }
  var preset = s.preset || 'rest';
  if (preset !== 'rest' && preset !== 'apps-script') {
    throw new Error('safeFetch: source ' + name + ': preset ' + JSON.stringify(preset) + " is not 'rest' or 'apps-script'");
  }
  if (!s.urlPrefixes || !s.urlPrefixes.length) {
    throw new Error('safeFetch: source ' + name + ' has no urlPrefixes: list the URLs it may call');
  }
  var maxAttempts = s.maxAttempts == null ? (preset === 'apps-script' ? 2 : 3) : Number(s.maxAttempts);
  if (!(maxAttempts >= 1 && maxAttempts <= 10 && Math.floor(maxAttempts) === maxAttempts)) {
    throw new Error('safeFetch: source ' + name + ': maxAttempts must be a whole number from 1 to 10');
  }
  return {
    name: name,
    preset: preset,
    urlPrefixes: s.urlPrefixes,
    maxAttempts: maxAttempts,
    ratePerMinute: Number(s.ratePerMinute || 0),
    keyField: s.keyField == null ? 'id' : String(s.keyField),
    bodyKeyField: s.bodyKeyField ? String(s.bodyKeyField) : '',
    headers: s.headers || {},
    redirectPrefixes: s.redirectPrefixes || ['https://script.googleusercontent.com/'],
    overrides: s.overrides || {},
  };
}

function safeFetchDeadLetterOn_() {
  var dl = SAFEFETCH.deadLetter || {};
  return dl.on || ['retryable', 'deferred', 'systemic', 'rejected'];
}

// ---------------------------------------------------------------------------------------
// Keys (invariant 3: a call's key never changes; model.EffectiveKey and model.MintKey).

/**
 * The call's key: the given one, else the payload's key field, else minted. A given key
 * that disagrees with the payload's key field throws: triage would refuse such a row, and
 * one payload must never travel under two keys.
 */
function safeFetchKey_(source, src, url, payload, given) {
  var pk = src.keyField ? safeFetchPayloadKey_(payload, src.keyField) : null;
  var key = given || pk;
  if (given && pk != null && pk !== given) {
    throw new Error('safeFetch: payload field ' + src.keyField + ' is ' + JSON.stringify(pk) +
      ' but the key is ' + JSON.stringify(given) + ': one call, one key; drop one of them');
  }
  if (!key) {
    key = safeFetchMintKey_(source, url, payload);
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(key) ||
      /[\ud800-\udbff](?![\udc00-\udfff])|(^|[^\ud800-\udbff])[\udc00-\udfff]/.test(key)) {
    throw new Error('safeFetch: the key contains a control character or invalid text: no header can carry it; not sent');
  }
  return key;
}

/**
 * triage's MintKey(source, url, payload, ""): "triage-" + 32 hex digits of
 * SHA-256(source \0 url \0 payload \0 "" \0), over UTF-8 bytes.
 */
function safeFetchMintKey_(source, url, payload) {
  var text = [source, url, payload, ''].join('\u0000') + '\u0000';
  var digest = Utilities.computeDigest(Utilities.DigestAlgorithm.SHA_256, text, Utilities.Charset.UTF_8);
  var hex = digest.map(function (b) {
    var v = (b < 0 ? b + 256 : b).toString(16);
    return v.length === 1 ? '0' + v : v;
  }).join('');
  return 'triage-' + hex.slice(0, 32);
}

/**
 * The key in a top-level field of a JSON object payload, read as model.PayloadKey reads it:
 * a string, trimmed, if not empty; a number as its literal text (so 1.0 stays "1.0"); the
 * last occurrence of a repeated field, as a JSON decoder keeps it. null when there is none.
 */
function safeFetchPayloadKey_(payload, field) {
  var obj;
  try {
    obj = JSON.parse(payload);
  } catch (e) {
    return null;
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj) || !Object.prototype.hasOwnProperty.call(obj, field)) {
    return null;
  }
  var v = obj[field];
  if (typeof v === 'string') {
    v = safeFetchTrim_(v);
    return v === '' ? null : v;
  }
  if (typeof v === 'number') {
    var raw = safeFetchRawField_(payload, field);
    return raw == null ? String(v) : raw;
  }
  return null;
}

/**
 * Trims what Go's strings.TrimSpace trims (and triage trims a key with), which is not quite
 * what String.prototype.trim does (U+0085 yes, U+FEFF no).
 */
function safeFetchTrim_(s) {
  return s.replace(/^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, '');
}

/** The raw text of the last top-level field named field of a valid JSON object. */
function safeFetchRawField_(text, field) {
  var i = text.indexOf('{') + 1;
  var found = null;
  function ws() { while (i < text.length && ' \t\r\n'.indexOf(text[i]) >= 0) i++; }
  function skipString() {
    var start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  }
  function skipValue() {
    ws();
    var start = i;
    if (text[i] === '"') {
      skipString();
    } else if (text[i] === '{' || text[i] === '[') {
      var depth = 0;
      do {
        if (text[i] === '"') { skipString(); continue; }
        if (text[i] === '{' || text[i] === '[') depth++;
        if (text[i] === '}' || text[i] === ']') depth--;
        i++;
      } while (depth > 0);
    } else {
      while (i < text.length && ',}] \t\r\n'.indexOf(text[i]) < 0) i++;
    }
    return text.slice(start, i);
  }
  for (;;) {
    ws();
    if (text[i] !== '"') return found;
    var name = skipString();
    ws();
    i++; // ':'
    var raw = skipValue();
    if (name === field) found = raw;
    ws();
    if (text[i] !== ',') return found;
    i++;
  }
}

/**
 * The body with the key in a top-level field, every other byte unchanged (replay's
 * withBodyKey): inserted right after the opening brace where absent, left alone where equal.
 */
function safeFetchWithBodyKey_(payload, field, key) {
  var obj;
  try {
    obj = JSON.parse(payload);
  } catch (e) {
    obj = null;
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new Error('safeFetch: payload is not a JSON object, so it can\'t carry the key in body field ' + JSON.stringify(field));
  }
  if (Object.prototype.hasOwnProperty.call(obj, field)) {
    var have = safeFetchPayloadKey_(payload, field);
    if (have === key) return payload;
    throw new Error('safeFetch: payload field ' + field + ' is not the key ' + JSON.stringify(key) + ': one call, one key');
  }
  var open = payload.indexOf('{');
  var ins = JSON.stringify(field) + ':' + JSON.stringify(key) + (Object.keys(obj).length ? ',' : '');
  return payload.slice(0, open + 1) + ins + payload.slice(open + 1);
}

// ---------------------------------------------------------------------------------------
// Destinations (invariant 8, model.URLUnderPrefixes).

/** Parses an absolute http(s) URL strictly: {scheme, host, path, query} or {error}. */
function safeFetchParseUrl_(s) {
  var bad = /[\u0000-\u0020\u007f-\uffff\\#]/.exec(s);
  if (bad) {
    return {error: 'has a space, control, non-ASCII, backslash or # character at position ' + (bad.index + 1)};
  }
  var m = /^([A-Za-z][A-Za-z0-9+.\-]*):\/\/([^\/?]*)([^?]*)(\?.*)?$/.exec(s);
  if (!m) return {error: 'is not an absolute http(s) URL (https://host/path)'};
  var scheme = m[1].toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return {error: 'has the scheme ' + m[1] + ': only http and https are sent to'};
  var host = m[2].toLowerCase();
  if (host === '') return {error: 'has no host'};
  if (host.indexOf('@') >= 0) return {error: 'carries user info (user@host): refused, a reader could take either part for the host'};
  if (host.indexOf('%') >= 0) return {error: 'has a percent-escape in its host'};
  host = host.replace(scheme === 'https' ? /:443$/ : /:80$/, '');
  var path = m[3] || '/';
  if (path.indexOf(';') >= 0) return {error: 'has ";" in its path (path parameters: some servers read "..;/" as "..")'};
  if (/%(2e|2f|5c|3b|3f|23|25|[01][0-9a-f]|7f|[89a-f][0-9a-f])/i.test(path)) return {error: 'has an encoded ".", "/", "\\", ";", "?", "#", "%", control or non-ASCII character in its path'};
  if (path.indexOf('//') === 0) return {error: 'has a path starting with "//"'};
  if (path.split('/').some(function (seg) { return seg !== '' && /^\.+$/.test(seg); })) return {error: 'has a dot segment (".", "..") in its path'};
  path = path.replace(/%[0-9a-f]{2}/gi, function (e) { return e.toUpperCase(); });
  return {scheme: scheme, host: host, path: path, query: m[4] || ''};
}

/** null when url lies under one of prefixes (same scheme and host, path on a segment boundary unless the prefix ends in "/"), else why not. */
function safeFetchUrlRefusal_(url, prefixes) {
  var u = safeFetchParseUrl_(url);
  if (u.error) return 'url ' + JSON.stringify(url.slice(0, 200)) + ' ' + u.error;
  for (var i = 0; i < (prefixes || []).length; i++) {
    var p = safeFetchParseUrl_(String(prefixes[i]));
    if (p.error || p.query || p.scheme !== u.scheme || p.host !== u.host) continue;
    if (p.path.slice(-1) === '/' ? u.path.indexOf(p.path) === 0 : (u.path === p.path || u.path.indexOf(p.path + '/') === 0)) return null;
  }
  return 'url ' + JSON.stringify(url.slice(0, 200)) + ' is not under any allowed prefix (' + (prefixes || []).join(', ') + ')';
}

// ---------------------------------------------------------------------------------------
// Sending: attempts, classification, backoff, Retry-After, rate limit.

/** Every attempt of one call; returns {outcome, deferred, status, attempts, error, response, waits}. */
function safeFetchSend_(src, call, callHeaders, contentType) {
  var res = {outcome: '', deferred: false, status: 0, attempts: 0, error: '', response: null, waits: []};
  var headers = {};
  for (var name in src.headers) {
    var v = String(src.headers[name]);
    if (v.indexOf('prop:') === 0) {
      var prop = v.slice(5);
      v = PropertiesService.getScriptProperties().getProperty(prop);
      if (v == null || v === '') {
        // Every call of this source would go out without its credential: systemic, unsent.
        res.outcome = 'systemic';
        res.error = 'Script Property ' + prop + ' (header ' + name + ' of source ' + src.name + ') is not set: set it in Project Settings > Script Properties; not sent';
        return res;
      }
    }
    headers[name] = v;
  }
  for (var n2 in callHeaders) headers[n2] = callHeaders[n2];
  headers['Idempotency-Key'] = call.key;
  var params = {
    method: call.method.toLowerCase(),
    headers: headers,
    muteHttpExceptions: true, // a 4xx/5xx is an answer to classify, not an exception
    followRedirects: false,   // a 3xx is systemic (or the apps-script hop, done by hand)
  };
  if (call.payload !== '') {
    params.payload = call.payload;
    if (contentType) params.contentType = contentType;
  }

  for (var n = 1; n <= src.maxAttempts; n++) {
    if (!safeFetchRateSlot_(src, res)) {
      res.deferred = true;
      if (!res.outcome) res.outcome = 'retryable';
      res.error = 'rate limit of ' + src.ratePerMinute + ' requests per minute for ' + src.name +
        ' still reached after waiting a minute: deferred to a later run' + (res.attempts ? ' (last answer: ' + res.error + ')' : '; not sent');
      return res;
    }
    res.attempts = n;
    var a = safeFetchAttempt_(src, call.url, params);
    res.outcome = a.outcome;
    res.status = a.status;
    res.error = a.error;
    res.response = a.response;
    if (a.outcome !== 'retryable') return res;
    var wait = safeFetchBackoff_(n);
    if (a.retryAfterMs != null) {
      if (a.retryAfterMs > SAFEFETCH_CAP_MS) {
        res.deferred = true;
        res.error = a.error + '; it asked to retry in ' + Math.ceil(a.retryAfterMs / 1000) + ' s, beyond the ' + SAFEFETCH_CAP_MS / 1000 + ' s cap: deferred to a later run';
        return res;
      }
      wait = a.retryAfterMs;
    }
    if (n === src.maxAttempts) break;
    res.waits.push(wait);
    Utilities.sleep(wait);
  }
  res.error += ' (after ' + res.attempts + (res.attempts === 1 ? ' attempt)' : ' attempts)');
  return res;
}

/** Full jitter before attempt n+1: uniform(0, min(cap, base * 2^(n-1))) milliseconds. */
function safeFetchBackoff_(n) {
  var ceil = Math.min(SAFEFETCH_CAP_MS, SAFEFETCH_BASE_MS * Math.pow(2, n - 1));
  var u = Math.random();
  if (!(u > 0)) return 0;
  if (u >= 1) return ceil;
  return Math.floor(u * ceil);
}

/**
 * Takes one request slot of the source's per-minute window (a counter in the script cache,
 * shared by every execution, under the script lock). When the window is full it waits for
 * the next window (at most a minute) once; when that one is full too (other executions took
 * it), it returns false: the call is deferred rather than waiting on.
 */
function safeFetchRateSlot_(src, res) {
  if (!(src.ratePerMinute > 0)) return true;
  for (var tries = 0; tries < 2; tries++) {
    var now = Date.now();
    var windowStart = Math.floor(now / 60000);
    var cacheKey = 'safeFetch:rate:' + src.name + ':' + windowStart;
    var lock = LockService.getScriptLock();
    // A caller that already holds the script lock (seed 000's doPost does) keeps it: we
    // neither wait for it nor release it. Otherwise best effort: a count off by one beats a
    // stalled call.
    var locked = !lock.hasLock() && lock.tryLock(10000);
    try {
      var cache = CacheService.getScriptCache();
      var count = parseInt(cache.get(cacheKey) || '0', 10);
      if (count < src.ratePerMinute) {
        cache.put(cacheKey, String(count + 1), 120);
        return true;
      }
    } finally {
      if (locked) lock.releaseLock();
    }
    if (tries === 0) {
      var wait = (windowStart + 1) * 60000 - now;
      res.waits.push(wait);
      Utilities.sleep(wait);
    }
  }
  return false;
}

/** One request (plus the apps-script hop): {outcome, status, error, response, retryAfterMs}. */
function safeFetchAttempt_(src, url, params) {
  var resp;
  try {
    resp = UrlFetchApp.fetch(url, params);
  } catch (e) {
    return safeFetchFailure_(src, e, '');
  }
  var code = resp.getResponseCode();
  if (code >= 300 && code < 400) {
    return safeFetchRedirect_(src, resp);
  }
  return safeFetchAnswer_(src, resp, '');
}

/** An exception from UrlFetchApp (timeout, DNS, connection): no usable answer. */
function safeFetchFailure_(src, e, suffix) {
  var msg = safeFetchCap_(String(e && e.message || e));
  var timeout = /timeout|timed out/i.test(msg);
  var o = src.overrides[timeout ? 'timeout' : 'network'] || 'retryable';
  return {outcome: o, status: 0, response: null, retryAfterMs: null,
    error: (timeout ? 'timeout' : 'network error') + ' talking to ' + src.name + suffix + ': ' + msg + ' (it may have acted)'};
}

/** A 3xx: never followed, except the apps-script 302/303 to a redirectPrefixes address. */
function safeFetchRedirect_(src, resp) {
  var code = resp.getResponseCode();
  var loc = safeFetchHeader_(resp, 'Location');
  var overridden = Object.prototype.hasOwnProperty.call(src.overrides, String(code));
  if (src.preset === 'apps-script' && (code === 302 || code === 303) && !overridden && loc &&
      safeFetchUrlRefusal_(loc, src.redirectPrefixes) === null) {
    // doPost has already run; its answer waits at the echo URL, for a GET only. No body, no
    // key, no secret headers: they never cross to another host.
    var hop;
    try {
      hop = UrlFetchApp.fetch(loc, {method: 'get', muteHttpExceptions: true, followRedirects: false, headers: {Accept: 'application/json'}});
    } catch (e) {
      return safeFetchFailure_(src, e, ' (after the redirect)');
    }
    var hc = hop.getResponseCode();
    if (hc >= 300 && hc < 400) {
      return {outcome: 'systemic', status: hc, response: hop, retryAfterMs: null,
        error: src.name + "'s redirect target redirected again (" + hc + '); only one hop is followed: check the script\'s deployment'};
    }
    return safeFetchAnswer_(src, hop, ' (after the redirect)');
  }
  var o = safeFetchClassify_(src, code);
  var where = loc ? safeFetchCap_(loc) : 'nowhere (no Location header)';
  return {outcome: o, status: code, response: resp, retryAfterMs: null,
    error: code + ' from ' + src.name + ' to ' + where + (o === 'systemic' ? ': the endpoint moved (not followed); update the url' : '')};
}

/** A non-redirect answer. */
function safeFetchAnswer_(src, resp, suffix) {
  var code = resp.getResponseCode();
  var r = {outcome: '', status: code, response: resp, retryAfterMs: safeFetchRetryAfter_(safeFetchHeader_(resp, 'Retry-After')), error: ''};
  var replayed = String(safeFetchHeader_(resp, 'Idempotent-Replayed') || '').trim().toLowerCase() === 'true';
  var overridden = Object.prototype.hasOwnProperty.call(src.overrides, String(code));
  var text = '';
  try { text = resp.getContentText(); } catch (e) { text = ''; }
  if (code >= 200 && code < 300 && src.preset === 'apps-script' && !overridden) {
    var a = safeFetchAppsScriptAnswer_(text);
    r.outcome = a.outcome === 'delivered' && replayed ? 'duplicate' : a.outcome;
    if (r.outcome === 'rejected') r.error = src.name + ' rejected the call' + suffix + ': ' + a.why;
    else if (r.outcome === 'retryable') r.error = code + ' from ' + src.name + suffix + ' but ' + a.why + ' (it may have acted)';
    return r;
  }
  r.outcome = safeFetchClassify_(src, code);
  if (r.outcome === 'delivered' && replayed) r.outcome = 'duplicate';
  if (r.outcome === 'delivered' || r.outcome === 'duplicate') return r;
  var snip = text.trim() ? ': ' + safeFetchCap_(text.trim()) : '';
  r.error = code + ' from ' + src.name + suffix + ' (' + r.outcome + ')' + snip;
  return r;
}

/** The outcome table (DESIGN §5) by status, with the source's preset and overrides. */
function safeFetchClassify_(src, code) {
  var o = src.overrides[String(code)];
  if (o) return o;
  var apps = src.preset === 'apps-script';
  if (code >= 200 && code < 300) return 'delivered';
  if (code === 419) return 'duplicate';
  if (code >= 300 && code < 400) return 'systemic';
  if (code === 404 && apps) return 'retryable';
  if ([400, 401, 403, 404, 405, 422].indexOf(code) >= 0) return 'systemic';
  if ([408, 409, 425, 429].indexOf(code) >= 0 || code >= 500) return 'retryable';
  if (code >= 400 && code < 500) return 'rejected';
  return 'retryable'; // 1xx or nonsense: no usable answer
}

/** An Apps Script ContentService answer: {"ok":true} delivered, {"ok":false} rejected, else retryable. */
function safeFetchAppsScriptAnswer_(text) {
  var v;
  try {
    v = JSON.parse(text.trim());
  } catch (e) {
    return {outcome: 'retryable', why: 'the answer is not JSON'};
  }
  if (!v || typeof v !== 'object' || typeof v.ok !== 'boolean') {
    return {outcome: 'retryable', why: 'the answer has no "ok" field'};
  }
  if (v.ok) return {outcome: v.duplicate === true ? 'duplicate' : 'delivered', why: ''};
  var why = v.error != null ? (typeof v.error === 'string' ? v.error : JSON.stringify(v.error)) : (v.message || 'it answered {"ok":false}');
  return {outcome: 'rejected', why: safeFetchCap_(String(why))};
}

/**
 * A Retry-After value in milliseconds: delta-seconds or an HTTP-date. null when absent or
 * unusable (a past date, a negative number, garbage): the backoff applies instead.
 */
function safeFetchRetryAfter_(v) {
  v = String(v == null ? '' : v).trim();
  if (v === '') return null;
  if (/^[0-9]+$/.test(v)) return Math.min(Number(v), 1e12) * 1000;
  // The three HTTP-date forms: IMF-fixdate and RFC 850 say GMT; asctime is GMT unsaid.
  if (/^[A-Za-z]{3} [A-Za-z]{3} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$/.test(v)) v += ' GMT';
  if (!/ GMT$/.test(v)) return null;
  var t = Date.parse(v);
  if (isNaN(t)) return null;
  var d = t - Date.now();
  return d > 0 ? d : null;
}

/** A response header, case-insensitively (getAllHeaders keys vary in case). */
function safeFetchHeader_(resp, name) {
  var h = resp.getAllHeaders ? resp.getAllHeaders() : resp.getHeaders();
  var want = name.toLowerCase();
  for (var k in h) {
    if (k.toLowerCase() === want) return Array.isArray(h[k]) ? h[k][0] : h[k];
  }
  return null;
}

function safeFetchCap_(s) {
  s = String(s);
  return s.length > SAFEFETCH_MAX_TEXT ? s.slice(0, SAFEFETCH_MAX_TEXT) + '…' : s;
}

// ---------------------------------------------------------------------------------------
// The dead-letter queue.

/**
 * The dead-letter columns, in triage's schema order: the name triage writes, then the aliases
 * it also reads (model/schema.go). safeFetch fills the first nine (SAFEFETCH_WRITTEN); the
 * last three are triage's own, listed so that a mapping may name them and so that columns are
 * found exactly as triage finds them (model.MapHeaders).
 */
var SAFEFETCH_COLUMNS = {
  timestamp: ['timestamp', 'time', 'failed_at', 'failed at', 'created'],
  source: ['source'],
  url: ['url', 'endpoint', 'target'],
  payload: ['payload', 'body'],
  error: ['error', 'last_error', 'lasterror'],
  attempts: ['attempts', 'tries'],
  method: ['method', 'verb'],
  key: ['key', 'idempotency_key', 'idempotency key', 'idempotency-key'],
  status: ['status', 'state'],
  replayed_at: ['replayed_at', 'replayed at', 'replayedat'],
  triaged_by: ['triaged_by', 'triaged by'],
  triaged_at: ['triaged_at', 'triaged at'],
};

/** The fields appendToDeadLetterQueue writes: each needs a column. */
var SAFEFETCH_WRITTEN = ['timestamp', 'source', 'url', 'payload', 'error', 'attempts', 'method', 'key', 'status'];

/** White space as Go's unicode.IsSpace has it (JavaScript's \s adds U+FEFF and lacks U+0085). */
var SAFEFETCH_SPACE_ = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/**
 * A header as triage compares it (model.NormHeader): lower case, words split on white space
 * and joined by one space. Lower case is per character, as Go's strings.ToLower (no final
 * sigma, U+0130 to "i").
 */
function safeFetchNormHeader_(h) {
  var low = Array.from(String(h == null ? '' : h), function (c) { return c === '\u0130' ? 'i' : c.toLowerCase(); }).join('');
  return low.split(SAFEFETCH_SPACE_).filter(function (w) { return w !== ''; }).join(' ');
}

/** Go's strings.TrimSpace. */
function safeFetchTrimSpace_(s) {
  return String(s).replace(new RegExp('^' + SAFEFETCH_SPACE_.source), '').replace(new RegExp(SAFEFETCH_SPACE_.source + '$'), '');
}

/**
 * SAFEFETCH.deadLetter.columns as triage reads [tabs.deadletter.columns]: each field trimmed
 * and in lower case, checked by the rules of triage's `config check` (model.CheckColumns).
 * Returns {field: header}; throws on a mapping triage would refuse.
 */
function safeFetchColumnMapping_() {
  var given = (SAFEFETCH.deadLetter || {}).columns || {};
  var where = 'SAFEFETCH.deadLetter.columns';
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw new Error('safeFetch: ' + where + ' must be an object {field: \'Header name\'}, as [tabs.deadletter.columns] in triage\'s config; not sent');
  }
  var mapping = {};
  var from = {};
  Object.keys(given).forEach(function (f) {
    var field = safeFetchTrimSpace_(f).toLowerCase();
    if (!Object.prototype.hasOwnProperty.call(SAFEFETCH_COLUMNS, field)) {
      throw new Error('safeFetch: ' + where + ': failed_calls has no column ' + JSON.stringify(f) + ' to rename (the fields: ' + Object.keys(SAFEFETCH_COLUMNS).join(', ') + '); not sent');
    }
    if (from[field] != null) {
      throw new Error('safeFetch: ' + where + ' names the field ' + field + ' twice (' + JSON.stringify(from[field]) + ' and ' + JSON.stringify(f) + '); not sent');
    }
    if (typeof given[f] !== 'string') {
      throw new Error('safeFetch: ' + where + '.' + f + ' must be a header name (a string); not sent');
    }
    from[field] = f;
    mapping[field] = given[f];
  });
  var fields = Object.keys(mapping).sort();
  fields.forEach(function (f) {
    var n = safeFetchNormHeader_(mapping[f]);
    if (n === '') {
      throw new Error('safeFetch: ' + where + ': column ' + f + ' is mapped to a blank header name: name its header, or remove the line to use the default (' + JSON.stringify(SAFEFETCH_COLUMNS[f][0]) + '); not sent');
    }
    fields.forEach(function (g) {
      if (g !== f && f < g && safeFetchNormHeader_(mapping[g]) === n) {
        throw new Error('safeFetch: ' + where + ': columns ' + f + ' and ' + g + ' are both mapped to the header ' + JSON.stringify(mapping[f]) + ': each field needs its own column; not sent');
      }
    });
    Object.keys(SAFEFETCH_COLUMNS).forEach(function (c) {
      if (c !== f && mapping[c] == null && safeFetchNormHeader_(SAFEFETCH_COLUMNS[c][0]) === n) {
        throw new Error('safeFetch: ' + where + ': column ' + f + ' is mapped to ' + JSON.stringify(mapping[f]) + ', which is the ' + c + ' column\'s own header: both would claim one column; pick another header, or map ' + c + ' too; not sent');
      }
    });
  });
  return mapping;
}

/**
 * Finds each dead-letter field in a header row as triage does (model.MapHeaders): a mapped
 * field by its mapped header only; else its default header, else its first alias not taken
 * by an earlier field; the first matching column wins, and a column serves one field.
 * Returns {field: column index (0-based)} for the fields found.
 */
function safeFetchFindColumns_(header, mapping) {
  var norm = header.map(safeFetchNormHeader_);
  var find = function (name) {
    var n = safeFetchNormHeader_(name);
    return n === '' ? -1 : norm.indexOf(n);
  };
  var cols = {};
  var used = {};
  Object.keys(SAFEFETCH_COLUMNS).forEach(function (field) {
    var names = SAFEFETCH_COLUMNS[field];
    var idx;
    if (mapping[field] != null && mapping[field] !== '') {
      idx = find(mapping[field]);
    } else {
      idx = find(names[0]);
      if (idx < 0 || used[idx]) {
        idx = -1;
        for (var i = 1; i < names.length; i++) {
          var j = find(names[i]);
          if (j >= 0 && !used[j]) {
            idx = j;
            break;
          }
        }
      }
    }
    if (idx >= 0 && used[idx]) idx = -1;
    if (idx >= 0) {
      used[idx] = true;
      cols[field] = idx;
    }
  });
  return cols;
}

/**
 * Appends a failed call to the dead-letter tab: one row, columns found by header name as
 * triage finds them, with SAFEFETCH.deadLetter.columns for renamed headers (so operators may
 * reorder them and add their own), every value written as text (a payload
 * starting with "=" must never become a formula: invariant 2), the key that was sent in
 * `key`, status `dead`. Creates nothing: a missing tab or column throws, naming it.
 *
 * call:   {source, url, method, payload, key}  (payload: the exact body sent)
 * result: {outcome, deferred, attempts, error}
 */
function appendToDeadLetterQueue(call, result) {
  var dl = SAFEFETCH.deadLetter || {};
  var tabName = dl.sheetName || 'failed_calls';
  var ss = dl.spreadsheetId ? SpreadsheetApp.openById(dl.spreadsheetId) : SpreadsheetApp.getActiveSpreadsheet();
  if (!ss) {
    throw new Error('appendToDeadLetterQueue: no spreadsheet: bind this script to the spreadsheet or set SAFEFETCH.deadLetter.spreadsheetId');
  }
  var sheet = ss.getSheetByName(tabName);
  if (!sheet) {
    throw new Error('appendToDeadLetterQueue: the tab ' + JSON.stringify(tabName) + ' does not exist: create it (triage init does) with the header row');
  }
  var payload = String(call.payload == null ? '' : call.payload);
  if (payload.length > SAFEFETCH_MAX_CELL) {
    throw new Error('appendToDeadLetterQueue: the payload is ' + payload.length + ' characters and a cell holds ' + SAFEFETCH_MAX_CELL + ': the call can\'t be dead-lettered in a sheet; store it elsewhere');
  }
  var width = sheet.getLastColumn();
  var header = width > 0 ? sheet.getRange(1, 1, 1, width).getValues()[0] : [];
  var mapping = safeFetchColumnMapping_();
  var cols = safeFetchFindColumns_(header, mapping);
  var missing = SAFEFETCH_WRITTEN.filter(function (f) { return cols[f] == null; }).map(function (f) {
    return mapping[f] != null ? f + ' (headed ' + JSON.stringify(mapping[f]) + ', as SAFEFETCH.deadLetter.columns maps it)' : f;
  });
  if (missing.length) {
    throw new Error('appendToDeadLetterQueue: the tab ' + JSON.stringify(tabName) + ' has no ' + missing.join(', ') +
      ' column' + (missing.length > 1 ? 's' : '') + ' in its header row: add ' + (missing.length > 1 ? 'them' : 'it') + ' (triage init does); the call was not dead-lettered');
  }
  var values = {
    timestamp: Utilities.formatDate(new Date(), 'UTC', "yyyy-MM-dd'T'HH:mm:ss'Z'"),
    source: String(call.source),
    url: String(call.url),
    payload: payload,
    error: String(result.error || result.outcome || ''),
    attempts: String(result.attempts || 0),
    method: String(call.method || 'POST').toUpperCase(),
    key: String(call.key),
    status: 'dead',
  };
  var row = header.map(function () { return ''; });
  SAFEFETCH_WRITTEN.forEach(function (field) { row[cols[field]] = values[field]; });

  var lock = LockService.getScriptLock();
  var mine = !lock.hasLock(); // a caller's lock is the caller's to release
  if (mine) lock.waitLock(30000); // two executions must not pick the same empty row
  try {
    var at = sheet.getLastRow() + 1;
    if (at > sheet.getMaxRows()) {
      // A full grid (every row used, as after 1,000 dead letters on a default tab): a range
      // past its last row is an error, so grow it first.
      sheet.insertRowsAfter(sheet.getMaxRows(), at - sheet.getMaxRows());
    }
    var range = sheet.getRange(at, 1, 1, row.length);
    // Text format first, so setValues stores each string as typed: "=..." stays text, a
    // key "007" keeps its zeros. Then read back: if any cell was still parsed, write those
    // cells again with a leading apostrophe (Sheets' text prefix, not part of the value).
    range.setNumberFormat('@');
    range.setValues([row]);
    var back = range.getValues()[0];
    var fix = [];
    // A cell must read back as the same string: a number 7 for "007", a date, a formula's
    // result or "1" read as the number 1 all mean Sheets parsed what it was given.
    for (var i = 0; i < row.length; i++) {
      if (back[i] !== row[i]) fix.push(i);
    }
    fix.forEach(function (i) { sheet.getRange(at, i + 1).setValue("'" + row[i]); });
    if (fix.length) {
      back = range.getValues()[0];
      var still = fix.filter(function (i) { return back[i] !== row[i]; });
      if (still.length) {
        throw new Error('appendToDeadLetterQueue: row ' + at + ' of ' + tabName + ': column(s) ' + still.map(function (i) { return JSON.stringify(header[i]); }).join(', ') + ' read back differently from what was written; check that tab\'s formatting');
      }
    }
    SpreadsheetApp.flush();
  } finally {
    if (mine) lock.releaseLock();
  }
  return values;
}
