// This build's version as package.json states it: the OpenAPI document's `info.version` and the MCP server's
// `serverInfo.version` both report it, so that they never disagree with the package.
import { readFileSync } from 'node:fs';

export const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
