// Reading one rail's values out of a tenant's settlement configuration. Storage keeps them per rail (keyed by the
// rail's name) as they were written; a value missing or of another type reads as not set, so that a rail whose
// fields grew since the configuration was written reads its new fields as unset.
import type { RailName, RailSettings, SettlementConfig } from './types.ts';

const noSettings: RailSettings = {};

/** The values of `rail` in `config` (none when there is no configuration, or it holds nothing for the rail). */
export function settingsOf(config: Pick<SettlementConfig, 'settings'> | undefined, rail: RailName): RailSettings {
  return config && Object.hasOwn(config.settings, rail) ? config.settings[rail]! : noSettings;
}

/** A text value, or null when it is not set. */
export function textSetting(settings: RailSettings, field: string): string | null {
  const value = Object.hasOwn(settings, field) ? settings[field] : null;
  return typeof value === 'string' ? value : null;
}

/** A flag's value; false when it is not set. */
export function flagSetting(settings: RailSettings, field: string): boolean {
  return Object.hasOwn(settings, field) && settings[field] === true;
}
