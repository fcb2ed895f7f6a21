// Google's Node client (googleapis) replaying dead letters as a plain script would: read the
// failed_calls tab, POST each dead row's payload to its url with its Idempotency-Key (10 at a
// time), then write each row's outcome back (status, attempts, error, replayed_at) in one
// values.batchUpdate (RAW). No checks, no journal: the yardstick for `triage replay` under
// bench/netshape.
//
//   SHEETS_EMULATOR_HOST=127.0.0.1:8089 node replay.js replay500 failed_calls
const { google } = require('googleapis');

async function main() {
  const host = process.env.SHEETS_EMULATOR_HOST || '127.0.0.1:8089';
  const [spreadsheetId, tab = 'failed_calls'] = process.argv.slice(2);
  const sheets = google.sheets({ version: 'v4', rootUrl: `http://${host}/` });
  const res = await sheets.spreadsheets.values.batchGet({
    spreadsheetId,
    ranges: [tab],
    valueRenderOption: 'UNFORMATTED_VALUE',
    dateTimeRenderOption: 'SERIAL_NUMBER',
  });
  const rows = res.data.valueRanges[0].values || [];
  const h = (rows[0] || []).map((x) => String(x).trim().toLowerCase());
  const col = (name) => h.indexOf(name);
  const letter = (c) => String.fromCharCode(65 + c);
  const todo = [];
  rows.forEach((r, i) => { if (i > 0 && r[col('status')] === 'dead') todo.push(i); });
  const results = new Map();
  let next = 0;
  async function worker() {
    while (next < todo.length) {
      const i = todo[next++];
      const r = rows[i];
      try {
        const resp = await fetch(r[col('url')], {
          method: r[col('method')] || 'POST',
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': String(r[col('key')]) },
          body: String(r[col('payload')]),
        });
        results.set(i, resp.ok ? ['replayed', ''] : ['dead', String(resp.status)]);
      } catch (err) {
        results.set(i, ['dead', err.message]);
      }
    }
  }
  await Promise.all(Array.from({ length: 10 }, worker));
  const now = new Date().toISOString();
  const data = [];
  for (const [i, [status, error]] of results) {
    const r = rows[i];
    const attempts = Number(r[col('attempts')] || 0) + 1;
    data.push({ range: `'${tab}'!${letter(col('error'))}${i + 1}`, values: [[error]] });
    data.push({ range: `'${tab}'!${letter(col('attempts'))}${i + 1}`, values: [[attempts]] });
    data.push({ range: `'${tab}'!${letter(col('status'))}${i + 1}`, values: [[status]] });
    data.push({ range: `'${tab}'!${letter(col('replayed_at'))}${i + 1}`, values: [[now]] });
  }
  await sheets.spreadsheets.values.batchUpdate({ spreadsheetId, requestBody: { valueInputOption: 'RAW', data } });
  console.error(`${results.size} replayed`);
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
