// `svc login` and `svc logout`: a person signs the CLI in by device login (docs/sign-in.md#device-login) — the CLI
// prints a code, the person approves it in the console, and the session token lands in a credentials file only the
// user can read; `svc logout` deletes that file. The flow is the SDK's `deviceLogin()`, not a second copy.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFolder } from '../../infra/directories.ts';
import { deviceLogin, type DeviceLoginCredential } from '../../sdk/device-login.ts';
import { storedLoginContent, storedLoginDescription, storedLoginPath } from '../../sdk/stored-login.ts';
import { resolveGatewayBaseUrl } from '../../sdk/url.ts';
import { print, type CliCommand } from '../command.ts';

/** Where the credential is kept (`$XDG_CONFIG_HOME/svc/credentials.json`, default `~/.config`), as the SDKs read it. */
function credentialsFilePath(): string {
  return storedLoginPath(process.env)!;
}

/** Written beside the target with mode 0600 and renamed over it, so the token is never readable by others, not
 * even for a moment, and a crash never leaves half a file. */
function writeCredentials(file: string, server: string, credential: DeviceLoginCredential): void {
  createFolder(path.dirname(file), 0o700);
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(storedLoginContent(server, credential), null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  fs.renameSync(temporary, file);
}

export const login: CliCommand = {
  name: 'login',
  summary: 'Signs this CLI in as you: prints a code to approve in the console, then keeps the session token.',
  synopsis: '[--server URL] [--client-name NAME] [--json]',
  details: [
    '--server URL            the service (default SVC_GATEWAY_URL, else http://127.0.0.1:8080); https unless loopback',
    '--client-name NAME      what the approver sees this device called (default "svc CLI on <hostname>")',
    '--json                  print {server, credential_type, tenant_id, user_id or key_id, roles, expires_at, credentials_file}',
    '',
    'Open the address it prints, signed in to the console, and approve the code. The session token (15 minutes),',
    'or the API key an admin of a sandbox tenant granted instead, is written to $XDG_CONFIG_HOME/svc/credentials.json',
    '(default ~/.config/svc/credentials.json), mode 0600; it is never printed. Exit 1 when denied or expired.',
    '`svc whoami` and both SDKs use it, with this server, when they are given no API key.',
  ],
  options: { server: { type: 'string' }, 'client-name': { type: 'string' } },
  async run({ options, json }) {
    const server = resolveGatewayBaseUrl({ gatewayBaseUrl: typeof options.server === 'string' ? options.server : undefined });
    const clientName = typeof options['client-name'] === 'string' ? options['client-name'] : `svc CLI on ${os.hostname()}`.slice(0, 64);
    const credential = await deviceLogin({
      baseUrl: server,
      clientName,
      onPrompt: (prompt) => {
        // With --json, stdout carries only the final JSON line; the person still needs the prompt.
        const out = json ? process.stderr : process.stdout;
        out.write(`To sign in, open ${prompt.verificationUriComplete}\nand confirm the code ${prompt.userCode} (valid ${Math.round(prompt.expiresInSeconds / 60)} minutes).\nWaiting for approval...\n`);
      },
    });
    const file = credentialsFilePath();
    writeCredentials(file, server, credential);
    const who =
      credential.kind === 'session'
        ? `as ${credential.userId} (${credential.roles.join(', ')}), until ${credential.expiresAt.toISOString()}`
        : `with API key ${credential.keyId} (${credential.roles.join(', ')}), which does not expire: revoke it when done`;
    print(json, { server, credential_type: credential.kind, ...storedLoginDescription(credential), credentials_file: file }, `Signed in to tenant ${credential.tenantId} ${who}.\nCredential kept in ${file}.`);
  },
};

export const logout: CliCommand = {
  name: 'logout',
  summary: 'Forgets the session `svc login` kept (deletes the credentials file).',
  synopsis: '[--json]',
  details: ['--json                  print {credentials_file, removed} as one JSON line'],
  options: {},
  async run({ json }) {
    const file = credentialsFilePath();
    let removed = true;
    try {
      fs.unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      removed = false;
    }
    print(json, { credentials_file: file, removed }, removed ? `Signed out: removed ${file}.` : `Not signed in (no ${file}).`);
  },
};
