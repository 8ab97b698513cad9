// `svc signing-key stage|rotate|retire`: changes the gateway signing key file; the server reads it at start.
import {
  defaultKeyFilePath,
  GatewayKeyError,
  GatewayKeyring,
  readKeyFile,
  removeFromKeyFile,
  rotateKeyFile,
  stageKeyFile,
  writeKeyFile,
  type KeyFile,
} from '../../infra/gateway-keys.ts';
import { print, requiredOption, type CliCommand, type Invocation, type OptionSpec } from '../command.ts';

const fileNote = [
  '--json                  print {key_file, keys: [{kid, status}]} as one JSON line',
  '',
  'The key file is SVC_SIGNING_KEY_FILE (default SVC_DATA_DIR/signing-keys.json); restart the server after a change.',
  'With SVC_SIGNING_KEYS set the keys come from that variable: change it instead. See docs/operations.md.',
];

function signingKeyCommand(
  spec: { name: string; summary: string; synopsis: string; details: string[]; options: Record<string, OptionSpec> },
  change: (file: KeyFile, invocation: Invocation, command: CliCommand) => KeyFile,
): CliCommand {
  const command: CliCommand = {
    ...spec,
    details: [...spec.details, ...fileNote],
    async run(invocation) {
      const { json, config } = invocation;
      if (config.signingKeysJson) throw new GatewayKeyError('the keys come from SVC_SIGNING_KEYS; change that variable instead');
      const filePath = config.signingKeyFile ?? defaultKeyFilePath(config.dataDir);
      const changed = change(readKeyFile(filePath), invocation, command);
      new GatewayKeyring(changed); // Refuse to write a key set the server could not load.
      writeKeyFile(filePath, changed);
      const summary = changed.keys.map((key) => ({ kid: key.kid, status: key.status }));
      print(json, { key_file: filePath, keys: summary }, summary.map((key) => `${key.kid}  ${key.status}`).join('\n'));
    },
  };
  return command;
}

export const signingKeyStage = signingKeyCommand(
  { name: 'signing-key stage', summary: 'Publishes a next gateway signing key before it signs anything.', synopsis: '[--json]', details: [], options: {} },
  (file) => stageKeyFile(file),
);

export const signingKeyRotate = signingKeyCommand(
  { name: 'signing-key rotate', summary: 'Makes the next key (or a new one) active; the old one is retired, still published.', synopsis: '[--json]', details: [], options: {} },
  (file) => rotateKeyFile(file),
);

export const signingKeyRetire = signingKeyCommand(
  {
    name: 'signing-key retire',
    summary: 'Stops publishing a retired key: what it signed no longer verifies.',
    synopsis: '--kid KID [--json]',
    details: ['--kid KID               the key to remove (not the active one)'],
    options: { kid: { type: 'string' } },
  },
  (file, { options }, command) => removeFromKeyFile(file, requiredOption(command, options, 'kid')),
);
