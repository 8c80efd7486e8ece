#!/usr/bin/env -S node --max-semi-space-size=4
// The `wsag` command: the compiled CLI (dist/, built by `npm run build`, which `npm install`
// runs as its prepare step), from any working directory. V8's young generation is capped
// at 4 MiB per semi-space, as `npm start` does it (docs/deployment.md, "Memory and restart time").
import fs from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  console.error('wsag: dist/ is missing: run `npm run build` (npm install runs it) in the wsag-server directory');
  process.exit(1);
}
await import(main.href);
