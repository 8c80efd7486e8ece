#!/usr/bin/env -S node --max-semi-space-size=4 --v8-pool-size=1
// The `wsag` command: the compiled CLI (dist/, built by `npm run build`, which `npm install`
// runs as its prepare step), from any working directory. With the node flags of `npm start`:
// V8's young generation capped at 4 MiB per semi-space, its background work on one thread
// (docs/deployment.md, "Memory and restart time" and "V8's background thread").
import fs from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  console.error('wsag: dist/ is missing: run `npm run build` (npm install runs it) in the wsag-server directory');
  process.exit(1);
}
await import(main.href);
