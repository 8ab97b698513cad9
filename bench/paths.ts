// Where the bench runs from: the repository root (the servers it starts resolve their paths against it).
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../', import.meta.url));
