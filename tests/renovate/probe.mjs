// Runs Renovate's own code on what the tests ask (JSON lines in, JSON lines out), offline:
// the regex custom manager's extraction, its file matching, and the pep440 versioning module.
// Usage: node probe.mjs RENOVATE_PACKAGE_DIR < requests
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const root = process.argv[2];
const load = (path) => import(pathToFileURL(join(root, "dist", path)).href);
const regex = await load("modules/manager/custom/regex/index.js");
const files = await load("workers/repository/extract/file-match.js");
const pep440 = (await load("modules/versioning/pep440/index.js")).api;

const ops = {
  extract: ({ config, file, content }) => regex.extractPackageFile(content, file, config)?.deps ?? [],
  files: ({ config, files: list }) => files.getMatchingFiles(config, list),
  matches: ({ version, range }) => pep440.matches(version, range),
  isValid: ({ value }) => pep440.isValid(value),
  newValue: (args) => pep440.getNewValue(args) ?? null,
};

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  process.stdout.write(JSON.stringify(ops[request.op](request)) + "\n");
}
