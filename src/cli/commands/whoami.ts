// `svc whoami`: who the CLI acts as over HTTP: the credential the SDK would use (--api-key, else SVC_API_KEY, else
// the login `svc login` kept, with its server) and what the service says it is (GET /v1/auth/principal).
import { SvcClient } from '../../sdk/client.ts';
import { print, type CliCommand } from '../command.ts';

const sourceText = { option: '--api-key', environment: 'SVC_API_KEY', stored_login: 'the login `svc login` kept' } as const;

export const whoami: CliCommand = {
  name: 'whoami',
  summary: 'Says which tenant, role and credential the CLI acts as over HTTP (GET /v1/auth/principal).',
  synopsis: '[--server URL] [--api-key KEY] [--json]',
  details: [
    '--server URL            the service (default SVC_GATEWAY_URL, else the stored login\'s server, else http://127.0.0.1:8080)',
    '--api-key KEY           the credential (default SVC_API_KEY, else the one `svc login` kept)',
    '--json                  print {server, credential_source, tenant_id, environment, role, roles, key_kind, subject, mcp_scopes}',
    '',
    'The credential comes from --api-key, else SVC_API_KEY, else the login `svc login` kept; the stored login is only',
    'ever sent to the server it was obtained from. Exit 1 when there is no credential or the service refuses it.',
  ],
  options: { server: { type: 'string' }, 'api-key': { type: 'string' } },
  async run({ options, json }) {
    const client = await SvcClient.open({
      ...(typeof options['api-key'] === 'string' ? { apiKey: options['api-key'] } : {}),
      ...(typeof options.server === 'string' ? { gatewayBaseUrl: options.server } : {}),
      attemptsMax: 1,
    });
    const { principal } = client;
    print(
      json,
      {
        server: client.gatewayBaseUrl,
        credential_source: client.credentialSource,
        tenant_id: principal.tenant_id,
        environment: principal.environment,
        role: principal.service_account_role,
        roles: principal.roles,
        key_kind: principal.key_kind,
        subject: principal.subject,
        mcp_scopes: principal.mcp_scopes,
      },
      [
        `${principal.key_kind === 'session' ? `user ${principal.subject}` : `API key ${principal.subject} (${principal.key_kind})`} of tenant ${principal.tenant_id} (${principal.environment}) at ${client.gatewayBaseUrl}`,
        `role ${principal.service_account_role}${principal.mcp_scopes.length > 0 ? `, scopes ${principal.mcp_scopes.join(', ')}` : ''}`,
        `credential from ${sourceText[client.credentialSource]}`,
      ].join('\n'),
    );
  },
};
