// `svc migrate`: applies pending migrations (the server also does this at start), showing each on a terminal.
import { migrate } from '../../infra/migrate.ts';
import { print, type CliCommand } from '../command.ts';
import { openCliConnection } from '../database-connection.ts';
import { createProgress } from '../progress.ts';

export const migrateCommand: CliCommand = {
  name: 'migrate',
  summary: 'Applies pending migrations (the server also does this at start).',
  synopsis: '[--json]',
  details: [
    '--json                  print {applied_versions} as one JSON line',
    '',
    'On a terminal, each migration is shown on stderr while it runs.',
  ],
  options: {},
  async run({ json, config }) {
    const progress = createProgress({ json });
    const cli = await openCliConnection(config);
    try {
      const applied = await migrate(cli.connection, {
        onProgress: (step) => progress.update(`migrate: applying ${step.index}/${step.pending}: ${String(step.version).padStart(4, '0')}_${step.name}`),
      });
      progress.finish();
      print(json, { applied_versions: applied }, applied.length ? `applied migrations ${applied.join(', ')}` : 'up to date');
    } finally {
      progress.finish();
      await cli.close();
    }
  },
};
