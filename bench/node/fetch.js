// Google's Node client (googleapis) fetching the Inbox tab from a running `triage emulator`,
// as `triage list` reads it (values.batchGet, UNFORMATTED_VALUE, SERIAL_NUMBER), and
// writing the answer to stdout: the yardstick for `triage list` in docs/BENCHMARKS.md.
//
//   SHEETS_EMULATOR_HOST=127.0.0.1:8089 node fetch.js list100k Inbox > /dev/null
const { google } = require('googleapis');

async function main() {
  const host = process.env.SHEETS_EMULATOR_HOST || '127.0.0.1:8089';
  const [spreadsheetId = 'list100k', tab = 'Inbox'] = process.argv.slice(2);
  const sheets = google.sheets({ version: 'v4', rootUrl: `http://${host}/` });
  const start = process.hrtime.bigint();
  const res = await sheets.spreadsheets.values.batchGet({
    spreadsheetId,
    ranges: [tab],
    valueRenderOption: 'UNFORMATTED_VALUE',
    dateTimeRenderOption: 'SERIAL_NUMBER',
  });
  const rows = res.data.valueRanges[0].values || [];
  process.stdout.write(JSON.stringify(res.data));
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // the fetch alone, without starting Node and loading googleapis: hyperfine times the process
  console.error(`${rows.length} rows in ${ms.toFixed(0)} ms`);
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
