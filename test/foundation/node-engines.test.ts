// A clean `npm ci` prints nothing to act on, on every Node line the project supports: every locked package accepts
// the lowest release of each line package.json's `engines` names (npm warns EBADENGINE otherwise), every package with
// an install script has been reviewed in `allowScripts` (npm warns about it otherwise), and the README names the
// same lines as `engines`.
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../helpers/server-process.ts';

interface LockedPackage {
  version?: string;
  engines?: Record<string, string> | string[];
  hasInstallScript?: boolean;
}

const packageJson = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};
const lockfile = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');

/** The lowest release of each line `engines.node` admits (`^20.19.0 || ^24.21.0` → 20.19.0, 24.21.0). */
const supportedLineFloors = packageJson.engines.node.split('||').map((line) => semver.minVersion(line)!.version);

/** The Node range a locked package declares, from `engines` as an object or as the older list of strings. */
function nodeRangeOf(locked: LockedPackage): string | undefined {
  if (Array.isArray(locked.engines)) return locked.engines.find((entry) => entry.startsWith('node'))?.replace(/^node\s*/, '');
  return locked.engines?.['node'];
}

/** `node_modules/a/node_modules/@b/c` → `@b/c`. */
function packageNameOf(lockPath: string): string {
  return lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

const lockedPackages = Object.entries(lockfile.packages).filter(([lockPath]) => lockPath !== '');

describe('the Node lines the project supports', () => {
  it('are two lines, each with its lowest release, and the README states them', () => {
    expect(supportedLineFloors.length).toBeGreaterThanOrEqual(2);
    for (const floor of supportedLineFloors) {
      const [major, minor] = floor.split('.');
      expect(readme, `README.md should say Node ${major}.${minor} or later on the ${major} line`).toContain(`${major}.${minor} or later on the ${major} line`);
    }
  });

  it('the lockfile is read (so the checks below cannot pass by finding nothing)', () => {
    expect(lockedPackages.length).toBeGreaterThan(100);
    expect(lockedPackages.filter(([, locked]) => nodeRangeOf(locked) !== undefined).length).toBeGreaterThan(20);
  });

  it.each(supportedLineFloors)('every locked package accepts Node %s (no EBADENGINE on a clean npm ci)', (floor) => {
    const refusing = lockedPackages
      .filter(([, locked]) => {
        const range = nodeRangeOf(locked);
        return range !== undefined && !semver.satisfies(floor, range);
      })
      .map(([lockPath, locked]) => `${packageNameOf(lockPath)}@${locked.version} wants node ${nodeRangeOf(locked)}`);
    expect(refusing).toEqual([]);
  });

  it('every package with an install script is reviewed in allowScripts (no install-scripts warning)', () => {
    const reviewed = Object.keys(packageJson.allowScripts ?? {}).map((entry) => entry.replace(/(.)@.*$/, '$1'));
    const unreviewed = lockedPackages
      .filter(([, locked]) => locked.hasInstallScript === true)
      .map(([lockPath]) => packageNameOf(lockPath))
      .filter((name) => !reviewed.includes(name));
    expect(unreviewed).toEqual([]);
  });
});
