#!/usr/bin/env node
// The operator CLI entry: loads the TypeScript sources through tsx, then runs src/cli/main.ts. The published package
// carries the SDK only (package.json `files`), and npm ships a `bin` file regardless: without the sources beside it,
// say so instead of failing on a missing module.
import { existsSync } from 'node:fs';

const cliSource = new URL('../src/cli/main.ts', import.meta.url);
if (!existsSync(cliSource)) {
  process.stderr.write('svc: the operator CLI runs from a checkout of the repository (npm ci, then npx svc); this installation holds the SDK only\n');
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
await import(cliSource.href);
