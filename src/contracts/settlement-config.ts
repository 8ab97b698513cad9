// A tenant's settlement configuration as `PUT /v1/admin/settlement/config` takes it and both its routes answer it
// (docs/rails.md#settlement-configuration): `rails`, then each rail's fields, flat, as the rails declare them
// (src/rails/definition.ts); the route builds its contract from the registry's fields. The body schema checks types
// and sizes only: every case the spec names as a 400 is left to the rule check in src/rails/settlement-config.ts,
// so that each answers with its own code.
import Type, { type Static, type TSchema } from 'typebox';
import { railEndpointUrlLengthMax, railSecretLengthMax, settlementRailsMax } from '../limits.ts';
import { Nullable, Timestamp } from './common.ts';

/** A rail name as sent; unknown names are refused by the rule check with `settlement_config.invalid_rail_combination`. */
const railNameTextLengthMax = 64;

/** One configuration field as the wire carries it: public text, a flag, a live endpoint URL, or a write-only secret
 * (answered only as `<name>_set`). */
export interface SettlementConfigFieldContract {
  readonly name: string;
  readonly kind: 'text' | 'flag' | 'endpoint' | 'secret';
  readonly description: string;
  /** The longest text accepted (text fields; endpoints and secrets take their limits). */
  readonly lengthMax?: number;
}

const nullableText = (maxLength: number, description: string) => Type.Optional(Nullable(Type.String({ maxLength, description })));

function bodyMemberOf(field: SettlementConfigFieldContract): TSchema {
  switch (field.kind) {
    case 'flag':
      return Type.Optional(Type.Boolean({ description: field.description }));
    case 'endpoint':
      return nullableText(railEndpointUrlLengthMax, field.description);
    case 'secret':
      return nullableText(railSecretLengthMax, field.description);
    case 'text':
      if (field.lengthMax === undefined) throw new Error(`the text field ${field.name} declares no lengthMax`);
      return nullableText(field.lengthMax, field.description);
  }
}

/** What every answer carries beside the rails' fields. */
const AnswerFrame = Type.Object({
  object: Type.Literal('settlement_config'),
  environment: Type.Enum(['sandbox', 'live'] as const),
  rails: Type.Array(Type.String()),
});

/**
 * The body and answer schemas of the settlement configuration's routes for these fields (every registered rail's, in
 * registry order). The body: `rails`, the public fields, the endpoints, the secrets. The answer: the public fields,
 * then each endpoint and whether each secret is stored (`<name>_set`), never the secret.
 */
export function settlementConfigContracts(fields: readonly SettlementConfigFieldContract[], railNames: readonly string[]) {
  const publicFields = fields.filter((field) => field.kind === 'text' || field.kind === 'flag');
  const ofKind = (kind: SettlementConfigFieldContract['kind']) => fields.filter((field) => field.kind === kind);
  const body = Type.Object(
    {
      rails: Type.Array(Type.String({ maxLength: railNameTextLengthMax }), { maxItems: settlementRailsMax, description: `${railNames.join(' and/or ')}.` }),
      ...Object.fromEntries([...publicFields, ...ofKind('endpoint'), ...ofKind('secret')].map((field) => [field.name, bodyMemberOf(field)])),
    },
    { additionalProperties: false },
  );
  const liveMembers = fields.flatMap((field): [string, TSchema][] =>
    field.kind === 'endpoint' ? [[field.name, Nullable(Type.String())]] : field.kind === 'secret' ? [[`${field.name}_set`, Type.Boolean()]] : []);
  const answer = Type.Object({
    ...AnswerFrame.properties,
    ...Object.fromEntries(publicFields.map((field) => [field.name, field.kind === 'flag' ? Type.Boolean() : Nullable(Type.String())])),
    ...Object.fromEntries(liveMembers),
    updated_at: Nullable(Timestamp),
  });
  return { body, answer };
}

/** A PUT body: `rails` and each rail's fields (their types checked by the body schema). */
export type SettlementConfigBody = { readonly rails: readonly string[] } & Readonly<Record<string, unknown>>;

/** An answer: the frame, each rail's public fields and endpoints (text or null, flags), `<secret>_set` flags. */
export type SettlementConfigAnswer = Static<typeof AnswerFrame> & { updated_at: string | null } & Record<string, string | boolean | null | string[]>;
