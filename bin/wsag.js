#!/usr/bin/env node
// The `wsag` command: the compiled CLI (dist/, built by `npm run build`, which `npm install`
// runs as its prepare step), from any working directory.
import fs from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  console.error('wsag: dist/ is missing: run `npm run build` (npm install runs it) in the wsag-server directory');
  process.exit(1);
}
await import(main.href);
