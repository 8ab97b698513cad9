// The few parts of oidc-provider (an untyped JavaScript package) that test/helpers/oidc-provider.ts uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface KoaContext {
    path: string;
    status: number;
    body: unknown;
  }

  export interface Interaction {
    uid: string;
    params: Record<string, string | undefined>;
  }

  export interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    use(middleware: (context: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<Interaction>;
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: new (properties: { accountId: string; clientId: string }) => Grant;
  }
}
