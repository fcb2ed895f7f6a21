// Google's Node client (googleapis) setting the status of rows found by ID, as a plain script
// would: read the tab, locate each ID, write the Status cells (values.batchUpdate, RAW). No
// check, no journal: the yardstick for `triage set-status` under bench/netshape.
//
//   SHEETS_EMULATOR_HOST=127.0.0.1:8089 node setstatus.js set10k Inbox done m1 m11 ...
const { google } = require('googleapis');

async function main() {
  const host = process.env.SHEETS_EMULATOR_HOST || '127.0.0.1:8089';
  const [spreadsheetId, tab, status, ...ids] = process.argv.slice(2);
  const sheets = google.sheets({ version: 'v4', rootUrl: `http://${host}/` });
  const res = await sheets.spreadsheets.values.batchGet({
    spreadsheetId,
    ranges: [tab],
    valueRenderOption: 'UNFORMATTED_VALUE',
    dateTimeRenderOption: 'SERIAL_NUMBER',
  });
  const rows = res.data.valueRanges[0].values || [];
  const header = (rows[0] || []).map((h) => String(h).trim().toLowerCase());
  const idCol = header.indexOf('id');
  const statusCol = header.indexOf('status');
  const rowOf = new Map();
  rows.forEach((r, i) => { if (i > 0 && r[idCol] !== undefined) rowOf.set(String(r[idCol]), i + 1); });
  const letter = String.fromCharCode(65 + statusCol);
  const data = [];
  for (const id of ids) {
    const r = rowOf.get(id);
    if (r) data.push({ range: `'${tab}'!${letter}${r}`, values: [[status]] });
  }
  await sheets.spreadsheets.values.batchUpdate({ spreadsheetId, requestBody: { valueInputOption: 'RAW', data } });
  console.error(`${data.length} of ${ids.length} set`);
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
