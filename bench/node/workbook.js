// Writes the 100,000-row inbox workbook that `triage emulator --workbook` serves for the
// `list` comparison (docs/BENCHMARKS.md): the rows of internal/cli's BenchmarkList100k.
//
//   node workbook.js /tmp/list100k.json [rows]
const fs = require('fs');

const out = process.argv[2] || '/tmp/list100k.json';
const n = Number(process.argv[3] || 100000);
const rows = [['Timestamp', 'Name', 'Email', 'Message', 'Status', 'ID']];
for (let i = 1; i <= n; i++) {
  rows.push([45000 + i / 24, `Person ${i}`, `p${i}@example.com`, `hello ${i}`, 'new', `m${i}`]);
}
const wb = { spreadsheetId: 'list100k', title: 'list100k', timeZone: 'Etc/UTC', sheets: [{ title: 'Inbox', rows }] };
fs.writeFileSync(out, JSON.stringify(wb));
console.error(`${out}: ${n} rows`);
