// The two reference tables an operator reads are held to the code: docs/operations.md's configuration table names
// exactly the environment variables the server reads, and docs/cli.md has a section for exactly the commands `svc`
// has, naming each of the command's options.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliCommands } from '../../src/cli/commands/index.ts';
import { loadConfig } from '../../src/config.ts';
import { projectRoot } from '../helpers/server-process.ts';

const read = (file: string) => fs.readFileSync(path.join(projectRoot, file), 'utf8');

/** The lines of the markdown section under `heading`, up to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, index) => index > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** Every variable name `loadConfig` asks its environment for, read by handing it an environment that records. */
function variablesReadByConfig(): string[] {
  const asked = new Set<string>();
  const recording = new Proxy({} as NodeJS.ProcessEnv, {
    get(_, name) {
      if (typeof name === 'string') asked.add(name);
      return undefined;
    },
  });
  loadConfig(recording);
  return [...asked].sort();
}

describe('docs/operations.md, "Configuration"', () => {
  const table = section(read('docs/operations.md'), '## Configuration');
  const documented = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((match) => match[1]!).sort();

  it('lists every variable the server reads, and no other', () => {
    expect(documented.length).toBeGreaterThan(10);
    expect(documented).toEqual(variablesReadByConfig());
  });
});

describe('docs/cli.md', () => {
  const markdown = read('docs/cli.md');
  const headings = [...markdown.matchAll(/^### `svc ([a-z -]+)`$/gm)].map((match) => match[1]!);

  it('has one section per command, and none for a command that does not exist', () => {
    expect(headings.sort()).toEqual(cliCommands.map((command) => command.name).sort());
  });

  it.each(cliCommands.map((command) => [command.name, command] as const))('names every option of `svc %s` in its section', (name, command) => {
    const text = section(markdown, `### \`svc ${name}\``);
    const options = [...Object.keys(command.options).map((option) => `--${option}`), '--json'];
    expect(options.filter((option) => !text.includes(option))).toEqual([]);
    // The synopsis shown is the one `svc <command> --help` prints.
    expect(text).toContain(`svc ${name} ${command.synopsis}`);
  });
});
