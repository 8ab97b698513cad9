// What an engine command answers: the status, body and headers sent to the caller, and stored for replays.
export type ResponseHeaders = Record<string, string | string[]>;

export interface EngineAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: ResponseHeaders;
}
