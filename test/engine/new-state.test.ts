// Adding an intent state fails to compile wherever the state must be decided on, and nowhere else: src/ is compiled
// (the TypeScript compiler, in memory) with states added to the API contract's enum: a non-terminal one (a dispute
// window, say) and a terminal one (the public client's `escalated_external`, which this service does not have). Everything else that lists states derives them from the lifecycle table
// (src/engine/lifecycle.ts) or is held to it by test/engine/lifecycle-table.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../helpers/server-process.ts';

const contractFile = path.join(projectRoot, 'src/contracts/intents.ts');
const lifecycleFile = path.join(projectRoot, 'src/engine/lifecycle.ts');
/** One compilation of src/ takes some 15 s of CPU, much more on a busy machine. */
const compileTimeoutMs = 300_000;

const options: ts.CompilerOptions = (() => {
  const read = ts.readConfigFile(path.join(projectRoot, 'tsconfig.json'), ts.sys.readFile);
  return ts.parseJsonConfigFileContent(read.config, ts.sys, projectRoot).options;
})();
const sourceFiles = fs
  .readdirSync(path.join(projectRoot, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts'))
  .map((name) => path.join(projectRoot, 'src', name));

/** The text of `file` with `anchor` replaced; the anchor must match once, or this test has gone stale. */
function patched(file: string, anchor: RegExp, replace: (match: string) => string): string {
  const text = fs.readFileSync(file, 'utf8');
  expect(text.match(new RegExp(anchor.source, 'g')) ?? [], `${path.relative(projectRoot, file)} has one ${anchor}`).toHaveLength(1);
  return text.replace(anchor, replace);
}

/** The contract's `intentStates` with `added` at its end. */
const contractWith = (added: readonly string[]) =>
  patched(contractFile, /export const intentStates = \[[^\]]*\]/, (list) => `${list.slice(0, -1)}, ${added.map((state) => `'${state}'`).join(', ')}]`);

/** The lifecycle table's `states` with these declared, each entered with its event `intent.<state>` (the event
 * catalogue, src/contracts/events.ts, defines `intent.held` and `intent.resolved_split` already). */
const tableWith = (declared: Readonly<Record<string, { terminal: boolean }>>) =>
  patched(lifecycleFile, /export const states = \{\n/, (opening) =>
    opening + Object.entries(declared).map(([state, { terminal }]) => `  ${state}: { terminal: ${terminal}, capabilityLive: false, event: 'intent.${state}' },\n`).join(''));

/** The type errors of src/ (or of `onlyFile`) compiled with some files' text replaced: `file:line: message`, by file. */
function compileErrors(replacements: ReadonlyMap<string, string>, onlyFile?: string): Map<string, string[]> {
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => replacements.get(path.resolve(file)) ?? readFile(file);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError) => {
    const replaced = replacements.get(path.resolve(file));
    return replaced === undefined ? getSourceFile(file, language, onError) : ts.createSourceFile(file, replaced, language);
  };
  const program = ts.createProgram(onlyFile ? [onlyFile] : sourceFiles, options, host);
  const diagnostics = onlyFile ? program.getSemanticDiagnostics(program.getSourceFile(onlyFile)) : ts.getPreEmitDiagnostics(program);
  const byFile = new Map<string, string[]>();
  for (const diagnostic of diagnostics) {
    const file = diagnostic.file ? path.relative(projectRoot, diagnostic.file.fileName) : '(no file)';
    const line = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
    byFile.set(file, [...(byFile.get(file) ?? []), `${file}:${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`]);
  }
  return byFile;
}

describe('a state added to the lifecycle', { timeout: compileTimeoutMs }, () => {
  it('does not compile until the lifecycle table declares it', () => {
    const errors = compileErrors(new Map([[contractFile, contractWith(['disputed'])]]), lifecycleFile);
    expect([...errors.keys()]).toEqual(['src/engine/lifecycle.ts']);
    expect(errors.get('src/engine/lifecycle.ts')!.join('\n')).toMatch(/Property 'disputed' is missing/);
  });

  it('declared (a dispute window, an external escalation): fails where each must be decided on, and nowhere else', () => {
    // Both in one compilation: `disputed` not terminal, `escalated_external` terminal.
    const errors = compileErrors(new Map([
      [contractFile, contractWith(['disputed', 'escalated_external'])],
      [lifecycleFile, tableWith({ disputed: { terminal: false }, escalated_external: { terminal: true } })],
    ]));
    const all = [...errors.values()].flat().join('\n');
    expect([...errors.keys()].sort(), all).toEqual([
      // Confirm's decision has a case for every state: whether an intent in it settles, and how.
      'src/engine/decide/settlement.ts',
      // The event each state's transition records: the table names it (`intent.<state>` here), and the event
      // catalogue (src/contracts/events.ts) must declare it before the table compiles and events are queued.
      'src/engine/intent-events.ts',
      'src/engine/lifecycle.ts',
      // The agent receipt's settlement_outcome of each terminal state.
      'src/receipts/agent-receipt-service.ts',
      // How the standing rebuild counts an intent in each terminal state.
      'src/services/standing-service.ts',
    ]);
    // Each place names what it lacks: every new state for the decision, the terminal one alone for the others.
    const mentions = (file: string, state: string) => errors.get(file)!.some((message) => new RegExp(`['"]${state}['"]`).test(message));
    expect(mentions('src/engine/decide/settlement.ts', 'disputed') && mentions('src/engine/decide/settlement.ts', 'escalated_external'), all).toBe(true);
    for (const file of ['src/receipts/agent-receipt-service.ts', 'src/services/standing-service.ts']) {
      expect(mentions(file, 'escalated_external') && !mentions(file, 'disputed'), all).toBe(true);
    }
  });
});
