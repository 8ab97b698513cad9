// Creating a folder and its missing parents, one level at a time. Node's own `mkdirSync(…, { recursive: true })`
// never returns where a parent exists but refuses every new entry with ENOENT (procfs, sysfs: `SVC_DATA_DIR=/proc/x`
// spun forever); here each level is created once, and the first refusal is thrown.
import fs from 'node:fs';
import path from 'node:path';

/** Creates `folder` (and the parents it lacks) with `mode`; a folder that is already there is kept as it is. Throws
 * the file system's error (`code` set: ENOENT, EACCES, ENOTDIR, …) of the first level that cannot be created. */
export function createFolder(folder: string, mode: number): void {
  const missing: string[] = [];
  for (let current = path.resolve(folder); !fs.existsSync(current); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const level of missing) {
    try {
      fs.mkdirSync(level, { mode });
    } catch (error) {
      // Another process may have created it in the meantime; anything else is the answer.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  if (!fs.statSync(folder).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${folder}'`), { code: 'ENOTDIR', path: folder });
}

/** Why a file or folder could not be read or made, for a one-line message: `no such file or directory (ENOENT)`. */
export function fileErrorReason(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const reason = /^[A-Z]+: ([^,]+)/.exec(message ?? '')?.[1];
  return code && reason ? `${reason} (${code})` : String(message ?? error);
}
