#!/usr/bin/env node
// The `wsag` command: runs src/cli/main.ts through tsx (a runtime dependency), from any
// working directory. Paths are resolved from this file, not from the cwd.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const tsconfig = fileURLToPath(new URL('../tsconfig.json', import.meta.url));
register({ tsconfig: fs.existsSync(tsconfig) ? tsconfig : false });
await import('../src/cli/main.ts');
