// Runs the reference UI-TARS action parser on the cases read from stdin
// (a JSON array of {prediction, factor, screenContext, modelVer}) and
// prints its answers as a JSON array, for uitars' oracle test.
const { actionParser } = require('@ui-tars/action-parser');

let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const cases = JSON.parse(input);
  const errors = console.error;
  console.error = () => {}; // the parser logs unparsable actions
  const out = cases.map((c) => actionParser(c).parsed);
  console.error = errors;
  process.stdout.write(JSON.stringify(out));
});
