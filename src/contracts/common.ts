// What every route contract shares: the error envelope (one per status, its codes taken from the catalogue), the
// standard error sets of public and authenticated routes, list pages, ids, and the request headers several routes
// honour. Pure schema values (TypeBox); types are `Static<typeof X>`, never written beside a schema.
import Type, { type Static, type TSchema } from 'typebox';
import { errorCatalogue, type ErrorCode } from '../errors/catalogue.ts';
import { pageSizeDefault, pageSizeMax } from '../limits.ts';

/** A value or JSON null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An object whose other members are left to the sender: the response validator treats every object without an
 * `additionalProperties` of its own as closed, so an open one says so here. */
export const OpenObject = (description?: string) => Type.Record(Type.String(), Type.Unknown(), description === undefined ? {} : { description });

/** An open object in an answer the server builds from a typed value of its own (a predicate document, an
 * evaluation trace): its type accepts any object, where `OpenObject`'s would ask for an index signature. */
export const AnyObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

/** Any JSON value (an evidence payload, a template parameter). */
export const JsonValue = Type.Unknown();

/** A UUID as the API writes it; path parameters accept either case, as the repositories lower-case them. */
export const Uuid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' });

/** An instant as RFC 3339 UTC text (`Date.prototype.toISOString`). */
export const Timestamp = Type.String({ format: 'date-time' });

/** `{ object: 'list', data, has_more, next_cursor }`: every paged list answers in this shape. */
export const ListPage = <T extends TSchema>(item: T, description: string) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      has_more: Type.Boolean(),
      next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
    },
    { description },
  );

/** The page-size and cursor members of a list query; a route adds its filters beside them. The request validator
 * fills in the default `limit`, so a handler always sees one; the type says optional, as clients may omit it. */
export const pageQueryProperties = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault })),
  cursor: Type.Optional(Uuid),
};

// ---- errors ----

/** The catalogue codes a status can carry, in catalogue order. */
export function codesOfStatus(status: number): ErrorCode[] {
  return (Object.keys(errorCatalogue) as ErrorCode[]).filter((code) => errorCatalogue[code].status === status);
}

const envelopes = new Map<number, ReturnType<typeof envelopeSchema>>();

function envelopeSchema(status: number) {
  const codes = codesOfStatus(status);
  if (codes.length === 0) throw new Error(`no catalogue code has status ${status}: a route cannot answer it in the envelope`);
  return Type.Object(
    {
      error: Type.Object({
        code: Type.Enum(codes),
        message: Type.String(),
        details: Type.Optional(OpenObject('Facts about the error, named per code in docs/errors.md.')),
      }),
      request_id: Type.String(),
    },
    { description: `The error envelope; \`error.code\` is one of the catalogue's ${status} codes (docs/errors.md).` },
  );
}

/** The envelope of one status, `error.code` restricted to the catalogue's codes of that status. One object per
 * status, so that every route shares it (and the validator compiles it once). */
export function ErrorEnvelope(status: number) {
  let schema = envelopes.get(status);
  if (!schema) envelopes.set(status, (schema = envelopeSchema(status)));
  return schema;
}
export type ErrorEnvelope = Static<ReturnType<typeof ErrorEnvelope>>;

/** The envelope with any catalogue code: the JSON answer of a status range (the console's `4XX`). */
export const AnyErrorEnvelope = Type.Object({
  error: Type.Object({
    code: Type.Enum(Object.keys(errorCatalogue) as ErrorCode[]),
    message: Type.String(),
    details: Type.Optional(OpenObject('Facts about the error, named per code in docs/errors.md.')),
  }),
  request_id: Type.String(),
});

/** `{ [status]: envelope }` for each status given: spread into a route's `response`. */
export function errorResponses<S extends number>(...statuses: readonly S[]): Record<S, ReturnType<typeof ErrorEnvelope>> {
  const responses = {} as Record<S, ReturnType<typeof ErrorEnvelope>>;
  for (const status of statuses) responses[status] = ErrorEnvelope(status);
  return responses;
}

/** Statuses any route can answer whatever it does: a hostile URL or query (400, 414, src/plugins/input-boundary.ts),
 * an Expect header other than 100-continue (417, src/plugins/request-framing.ts), the rate limiter (429; public
 * routes are limited per address), an unexpected failure (500), a request that arrives while the server closes or a
 * dependency is down (503). */
export const routeErrorStatuses = [400, 414, 417, 429, 500, 503] as const;
/** And every authenticated route: no or a bad credential (401), a role or scope that may not call it (403). */
export const authenticatedErrorStatuses = [...routeErrorStatuses, 401, 403] as const;
/** And every route that takes a JSON body: not all of it in time (408), too large (413), not JSON or content-coded
 * (415; malformed JSON is a 400). */
export const bodyErrorStatuses = [408, 413, 415] as const;

type RouteErrorStatus = (typeof routeErrorStatuses)[number];
type AuthenticatedErrorStatus = (typeof authenticatedErrorStatuses)[number];
type BodyErrorStatus = (typeof bodyErrorStatuses)[number];

/** The error responses of a public route, plus the statuses given. */
export const publicErrors = <S extends number = never>(...statuses: readonly S[]) =>
  errorResponses<RouteErrorStatus | S>(...routeErrorStatuses, ...statuses);
/** The error responses of a public route that takes a JSON body, plus the statuses given. */
export const publicBodyErrors = <S extends number = never>(...statuses: readonly S[]) =>
  errorResponses<RouteErrorStatus | BodyErrorStatus | S>(...routeErrorStatuses, ...bodyErrorStatuses, ...statuses);
/** The error responses of an authenticated route, plus the statuses given (404 for a route with an id, say). */
export const authenticatedErrors = <S extends number = never>(...statuses: readonly S[]) =>
  errorResponses<AuthenticatedErrorStatus | S>(...authenticatedErrorStatuses, ...statuses);
/** The error responses of an authenticated route that takes a JSON body, plus the statuses given. */
export const authenticatedBodyErrors = <S extends number = never>(...statuses: readonly S[]) =>
  errorResponses<AuthenticatedErrorStatus | BodyErrorStatus | S>(...authenticatedErrorStatuses, ...bodyErrorStatuses, ...statuses);

// ---- request headers ----

/** The `Idempotency-Key` header of the routes that honour it (src/plugins/idempotency.ts): the same key and body
 * within the retention window replays the stored answer with `idempotent-replayed: true`. Its length is checked by
 * the idempotency plugin (`idempotency.key_invalid`), not here, so that the refusal keeps its own code. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Replays the stored answer of an earlier request with the same key and body.' })),
});

/** The text/html answer of a console page (docs/console.md): pages are not part of the JSON API, so their contract is
 * the media type alone. */
export const HtmlPage = (description: string) => ({ description, content: { 'text/html': { schema: Type.String() } } });

/** A 303 redirect after a console form: no body, a `Location`. */
export const SeeOther = {
  description: 'Redirect to the page that shows the outcome.',
  headers: { location: Type.String() },
  content: { 'text/html': { schema: Type.String() } },
};

/** The contract of every console route (docs/console.md): pages and their errors are HTML, forms answer 303, and the
 * console's own files are stylesheets and scripts. Declared once for the whole console (src/surfaces/console/index.ts). */
export const consoleResponses = {
  200: {
    description: 'A console page (HTML); under /console/assets, a stylesheet, a script or the icon.',
    content: { 'text/html': { schema: Type.String() }, 'text/css': { schema: Type.String() }, 'text/javascript': { schema: Type.String() }, 'image/svg+xml': { schema: Type.String() } },
  },
  303: SeeOther,
  // A request refused before the console's own handling (a body of another media type, a hostile URL, the rate
  // limiter) gets the API's error envelope, as every route does.
  '4XX': {
    description: 'The page that explains the refusal (not found, signed out, refused form); or, for a request refused before the console handled it, the error envelope.',
    content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: AnyErrorEnvelope } },
  },
  '5XX': {
    description: 'The page that reports a failure, with its request id; or the error envelope.',
    content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: AnyErrorEnvelope } },
  },
};
