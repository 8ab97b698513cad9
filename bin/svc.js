#!/usr/bin/env node
// The operator CLI entry: loads the TypeScript sources through tsx, then runs src/cli/main.ts. It runs from a checkout
// of the repository; the SDK package (packages/sdk) ships no command.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
