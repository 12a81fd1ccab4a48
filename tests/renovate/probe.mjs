// Runs Renovate's own code on what the tests ask (JSON lines in, JSON lines out), offline:
// the regex custom manager's extraction, its file matching, the pep440 versioning module, and the
// github-actions manager's extraction (what it would update in a workflow, and how it writes it).
// Usage: node probe.mjs RENOVATE_PACKAGE_DIR < requests
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";

const root = process.argv[2];
const load = (path) => import(pathToFileURL(join(root, "dist", path)).href);
const regex = await load("modules/manager/custom/regex/index.js");
const files = await load("workers/repository/extract/file-match.js");
const pep440 = (await load("modules/versioning/pep440/index.js")).api;
const actions = await load("modules/manager/github-actions/extract.js");
const { GlobalConfig } = await load("config/global.js");

async function workflow({ file, content }) {
  // the manager looks for a `gh actions-lock` file in the checkout: an empty folder has none
  GlobalConfig.set({ localDir: mkdtempSync(join(tmpdir(), "fa-lint-renovate-")) });
  return (await actions.extractPackageFile(content, file, {}))?.deps ?? [];
}

const ops = {
  extract: ({ config, file, content }) => regex.extractPackageFile(content, file, config)?.deps ?? [],
  files: ({ config, files: list }) => files.getMatchingFiles(config, list),
  matches: ({ version, range }) => pep440.matches(version, range),
  isValid: ({ value }) => pep440.isValid(value),
  newValue: (args) => pep440.getNewValue(args) ?? null,
  workflow,
};

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  process.stdout.write(JSON.stringify(await ops[request.op](request)) + "\n");
}
