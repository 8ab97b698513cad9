// The README and docs/ stand alone: every link and every repository path they name exists (with its heading, for a
// link to a section), and none of them points at a document outside the repository, which a reader does not have.
// The same holds for code, tests, benches, examples and the Python SDK: their comments cite docs/ files and headings
// that exist, and nothing outside the repository.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../helpers/server-process.ts';

const markdownFiles = ['README.md', ...fs.readdirSync(path.join(projectRoot, 'docs')).filter((file) => file.endsWith('.md')).map((file) => `docs/${file}`)];
const read = (file: string) => fs.readFileSync(path.join(projectRoot, file), 'utf8');

/** Documents of the development workspace that are not part of the product; naming them sends readers nowhere. */
const outsideReferences = /\.\.\/shared\b|\bshared\/(?:spec|reference|vectors|hooks|DESIGN|STYLE)|\bDESIGN\.md\b|\bSTYLE\.md\b|client-wire|service-spec|\bprotocols\.md\b|\bbincode-ts\.md\b/i;

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Markdown links `[text](target)` outside code blocks, without external ones. */
function localLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Repository paths written in code spans (`src/…`, `docs/…`), without patterns or placeholders. */
function namedPaths(markdown: string): string[] {
  return [...markdown.matchAll(/`((?:src|test|docs|migrations|bin|examples|bench|\.ci)\/[\w./-]+)`/g)]
    .map((match) => match[1]!)
    .filter((named) => !/[*<>…]/.test(named));
}

describe.each(markdownFiles)('%s', (file) => {
  const markdown = read(file);

  it('cites no document outside the repository', () => {
    const lines = markdown.split('\n').map((line, index) => `${index + 1}: ${line}`).filter((line) => outsideReferences.test(line));
    expect(lines).toEqual([]);
  });

  it('links only to files (and headings) that exist', () => {
    const broken: string[] = [];
    for (const link of localLinks(markdown)) {
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const resolved = target === '' ? path.join(projectRoot, file) : path.resolve(path.dirname(path.join(projectRoot, file)), decodeURIComponent(target));
      if (!resolved.startsWith(projectRoot)) {
        broken.push(`${link} (outside the repository)`);
      } else if (!fs.existsSync(resolved)) {
        broken.push(`${link} (no such file)`);
      } else if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only repository paths that exist', () => {
    const missing = namedPaths(markdown).filter((named) => !fs.existsSync(path.join(projectRoot, named)));
    expect(missing).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('catch an outside reference, a missing file and a missing heading', () => {
    expect(outsideReferences.test('see ../shared/spec/service-spec.md')).toBe(true);
    expect(outsideReferences.test('as DESIGN.md §2 says')).toBe(true);
    expect(outsideReferences.test('the wire rules (wire-compatibility.md)')).toBe(false);
    expect(outsideReferences.test('// the signed bytes (client-wire.md §1.4)')).toBe(true);
    expect(outsideReferences.test('// versions first (STYLE.md point 11)')).toBe(true);
    expect(outsideReferences.test('// the signed bytes (docs/signing.md#signed-structures)')).toBe(false);
    expect(localLinks('[a](docs/signing-keys.md) `[b](c.md)` [d](https://example.com)')).toEqual(['docs/signing-keys.md']);
    expect(headingAnchors('# Operations\n## Rate limits\n## `svc` CLI: the flags\n## Rate limits')).toEqual(new Set(['operations', 'rate-limits', 'svc-cli-the-flags', 'rate-limits-1']));
  });
});

/** Where code, tests, examples and the Python SDK live: every file in them ships with the repository. */
const codeFolders = ['src', 'bin', 'test', 'bench', 'examples', 'python'];
/** Folders that tools generate or install; nothing in them is written by us. */
const generatedFolders = new Set(['node_modules', '__pycache__', '.venv', 'dist', '.pytest_cache', '.mypy_cache', '.ruff_cache']);
/** This file names the outside documents on purpose: it is the check that catches them. */
const checkingFiles = new Set(['test/foundation/docs-links.test.ts']);

/** Every text file under the code folders (a file with a NUL byte is binary and skipped), as repository paths. */
function codeFiles(): string[] {
  const files: string[] = [];
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(path.join(projectRoot, folder), { withFileTypes: true })) {
      const named = `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!generatedFolders.has(entry.name)) walk(named);
      } else if (entry.isFile() && !checkingFiles.has(named) && !read(named).includes('\0')) {
        files.push(named);
      }
    }
  };
  for (const folder of codeFolders.filter((folder) => fs.existsSync(path.join(projectRoot, folder)))) walk(folder);
  return files;
}

describe('code, tests and examples', () => {
  const files = codeFiles();

  it('cite no document outside the repository, in comments or anywhere else', () => {
    const lines = files.flatMap((file) =>
      read(file).split('\n').flatMap((line, index) => (outsideReferences.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])));
    expect(lines).toEqual([]);
  });

  it('name only docs/ files, and headings of them, that exist', () => {
    // Ground-truth vectors record where they came from, and an upstream project's `docs/…` is its own, not ours.
    const missing = files.filter((file) => !file.startsWith('test/vectors/')).flatMap((file) =>
      [...read(file).matchAll(/\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g)].flatMap((match) => {
        const [cited, doc, anchor] = match as unknown as [string, string, string | undefined];
        const target = path.join(projectRoot, 'docs', doc);
        if (!fs.existsSync(target)) return [`${file}: ${cited} (no such file)`];
        if (anchor !== undefined && !headingAnchors(fs.readFileSync(target, 'utf8')).has(anchor)) return [`${file}: ${cited} (no such heading)`];
        return [];
      }));
    expect(missing).toEqual([]);
  });
});
