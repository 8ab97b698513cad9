// Contract of the public client's CLI usage report (POST /v1/public/analytics/kit-cli, docs/wire-compatibility.md):
// the fields its CLI sends after a successful local dev command. The service keeps none of it.
import Type, { type Static } from 'typebox';

const Short = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

export const ClientCliReport = Type.Object(
  {
    command_path: Type.String({ minLength: 1, maxLength: 64 }),
    success: Type.Boolean(),
    offline: Type.Optional(Type.Boolean()),
    kit_version: Short(64),
    runtime: Short(32),
    install_id_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    os_name: Short(32),
    client_context: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  // Later client versions may add fields: a report is never refused for one.
  { additionalProperties: true },
);
export type ClientCliReport = Static<typeof ClientCliReport>;

export const ClientReportAnswer = Type.Object(
  {
    object: Type.Literal('client_report'),
    /** Always false: the service keeps no client telemetry. */
    stored: Type.Literal(false),
  },
  { additionalProperties: false },
);
export type ClientReportAnswer = Static<typeof ClientReportAnswer>;
