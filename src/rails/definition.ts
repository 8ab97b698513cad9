// The one declaration of a rail (docs/rails.md "Adding a rail"): everything the rest of the service knows of it. Each
// rail's folder exports one RailDefinition; the registry (./index.ts) holds them, and the fund route, settlement
// configuration (its validation, storage, contract and OpenAPI), the console, MCP, log redaction and the sweeper
// iterate the registry instead of naming a rail.
import type { SettlementConfigFieldContract } from '../contracts/settlement-config.ts';
import type { ErrorCode } from '../errors/catalogue.ts';
import type { LiveRailAdapter, LiveRailOptions, PresentedCredential, RailAdapter, RailName, RailOperation, RailSettings } from './types.ts';

/** An HTTP header of the rail's wire, as documented on the fund route. */
export interface RailHeader {
  /** As the rail's protocol writes it (`PAYMENT-REQUIRED`); HTTP header names compare without case. */
  readonly name: string;
  readonly description: string;
  /** An example value, for the fund route's OpenAPI (src/contracts/examples.ts holds captured ones). */
  readonly example?: string;
}

/** A header a fund request carries the rail's credential in. */
export interface RailCredentialHeader extends RailHeader {
  /** The MCP fund tool's argument that is sent as this header (docs/mcp.md). */
  readonly toolArgument: string;
  readonly toolDescription: string;
}

/**
 * One field of the rail's settlement configuration, as `PUT /v1/admin/settlement/config` takes it on the wire (flat,
 * beside every other rail's fields: names are unique across rails) and as storage keeps it, under the rail's name:
 * - `text`: a public value, answered back (blank text is not set);
 * - `flag`: a public boolean, false when left out;
 * - `endpoint`: the live rail's base URL (https, or http to a loopback host), answered back;
 * - `secret`: write-only, sealed at rest (src/infra/secret-box.ts), answered only as `<name>_set`.
 */
export interface RailConfigurationField extends SettlementConfigFieldContract {
  /** Live funding needs it set: `funding.rail_not_configured` names it in `missing_fields`. */
  readonly requiredInLive?: boolean;
  /** Shown on the console's settlement page (src/surfaces/console/pages/settlement.ts). */
  readonly console?: { readonly label: string; readonly hint?: string };
}

/** What a rail's settlement configuration check is told beside its own values. */
export interface RailSettingsContext {
  readonly environment: 'sandbox' | 'live';
  /** The configuration lists the rail in `rails` (it funds with it). */
  readonly listed: boolean;
}

/** A rule of the rail's configuration that its values break: `code` is a `settlement_config.*` catalogue code (a 400),
 * `field` the field at fault, `message` what to fix when the catalogue's message is too general. */
export interface SettlementConfigFault {
  readonly code: ErrorCode;
  readonly field: string;
  readonly message?: string;
}

export interface RailDefinition {
  /** The wire name an intent's `settlement_rail` carries. */
  readonly name: RailName;
  /** Other names clients use for it, which change nothing (the adapter echoes the name the intent carries). */
  readonly aliases: readonly string[];
  /** Lowercase ISO 4217 codes the rail carries; any other is 422 `funding.currency_not_allowed`. */
  readonly currencies: readonly string[];
  /** The rail as the console's settlement page names it. */
  readonly consoleLabel: string;
  /** What a live tenant's rail reaches, as messages name it (`facilitator`, `payment processor`). */
  readonly counterpart: string;
  /** The headers of its 402 challenge. */
  readonly challengeHeaders: readonly RailHeader[];
  /** The headers a fund request carries its credential in; log lines never show them. */
  readonly credentialHeaders: readonly RailCredentialHeader[];
  /** The headers of a settled (or pending) payment's answer. */
  readonly receiptHeaders: readonly RailHeader[];
  /** Reads the credential a fund request presents, without the intent (the engine reads every rail's before it has
   * read the intent that decides which applies). The same reader as its adapters' `readCredential`. */
  readonly readCredential: (headers: Readonly<Record<string, string | string[] | undefined>>) => PresentedCredential;
  /** What the rail carries out in each environment. `charge` funds; the settlement of a live intent instructs the
   * rail to carry out `payout` or `refund` (LiveRailAdapter.instruct), and only when the rail declares it. */
  readonly operations: Readonly<Record<'sandbox' | 'live', readonly RailOperation[]>>;
  /** Its settlement configuration fields, in the order the wire and the console show them. */
  readonly fields: readonly RailConfigurationField[];
  /** The rules its own configuration values must keep (formats, values needed once listed); the registry checks the
   * rules across rails (`rails` itself) and endpoint URLs. Faults are answered in the catalogue's order of codes. */
  readonly checkSettings?: (settings: RailSettings, context: RailSettingsContext) => readonly SettlementConfigFault[];
  /** The sandbox simulator, for the name the intent carries (`settlementRail`: the rail's name or an alias). */
  readonly sandboxAdapter: (settlementRail: string) => RailAdapter;
  /** The adapter that reaches the tenant's real facilitator or processor; a rail without one cannot fund in live.
   * Loaded on first use, so a process that never funds in live never loads the rail's protocol libraries. */
  readonly liveAdapter?: (options: LiveRailOptions) => Promise<LiveRailAdapter>;
  /** Body fields log lines must never show, beyond its secret fields (which are always hidden). */
  readonly redactedFields?: readonly string[];
}
