// RFC 3339 timestamps exactly as a Rust server with `time::serde::rfc3339` reads and re-writes them, because the
// signed bytes carry the re-written text, not the text the client sent
// (docs/signing.md#rfc-3339-as-a-rust-server-re-writes-it).
import { rfc3339TextLengthMax } from '../limits.ts';
import { valueInvalid } from './encoding.ts';
import { SigningError } from './errors.ts';

export interface Rfc3339Time {
  /** The text `time`'s Rfc3339 formatter writes for the parsed value. */
  readonly normalized: string;
  /** The instant in milliseconds since the Unix epoch (sub-millisecond digits dropped). */
  readonly epochMs: number;
  /** The offset from UTC in minutes, as written (the time crate keeps it; it is not converted to UTC). */
  readonly offsetMinutes: number;
}

// Separator: `T`, `t` (every time 0.3 release) or a space (RFC 3339 §5.6 note; newer time releases take any byte,
// we take only these three). Zone: `Z`, `z` or ±HH:MM.
const rfc3339Pattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const secondsUtcPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const millisecondsUtcPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Parses like `time`'s Rfc3339 parser; throws `signing.value_invalid` naming `field` for what it would refuse. */
export function parseRfc3339(text: unknown, field: string): Rfc3339Time {
  if (typeof text !== 'string' || text.length > rfc3339TextLengthMax) valueInvalid(field, 'must be an RFC 3339 timestamp');
  const match = rfc3339Pattern.exec(text);
  if (!match) valueInvalid(field, 'must be an RFC 3339 timestamp (YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM))');
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [number, number, number, number, number];
  let second = Number(match[6]);
  // Digits past the ninth are read and dropped, as the time crate does (it truncates, it does not round).
  let nanosecond = Number((match[7] ?? '').slice(0, 9).padEnd(9, '0'));
  const offsetSign = match[9] === '-' ? -1 : 1;
  const offsetHours = match[8] ? 0 : Number(match[10]);
  const offsetMinutesPart = match[8] ? 0 : Number(match[11]);
  if (month < 1 || month > 12) valueInvalid(field, 'has a month outside 01-12');
  if (day < 1 || day > daysInMonth(year, month)) valueInvalid(field, 'has a day that does not exist in its month');
  if (hour > 23 || minute > 59 || second > 60) valueInvalid(field, 'has a time of day out of range');
  if (offsetHours > 23 || offsetMinutesPart > 59) valueInvalid(field, 'has an offset out of range');
  const offsetMinutes = offsetSign * (offsetHours * 60 + offsetMinutesPart);

  // The time crate has no leap seconds: :60 stands for the last nanosecond of :59, and only where a leap second
  // can be, the last second of a month in UTC.
  const isLeapSecond = second === 60;
  if (isLeapSecond) {
    second = 59;
    nanosecond = 999_999_999;
  }
  const utcSecondsMs = utcEpochMs(year, month, day, hour, minute, second) - offsetMinutes * 60_000;
  if (isLeapSecond && !isLastSecondOfUtcMonth(utcSecondsMs)) valueInvalid(field, 'has a leap second where none can be');

  const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  const time = `${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}${fractionText(nanosecond)}`;
  return {
    normalized: `${date}T${time}${offsetText(offsetMinutes)}`,
    epochMs: utcSecondsMs + Math.floor(nanosecond / 1_000_000),
    offsetMinutes,
  };
}

/** The RFC 3339 text a Rust server would sign for `text`. */
export function normalizeRfc3339(text: unknown, field: string): string {
  return parseRfc3339(text, field).normalized;
}

/** `YYYY-MM-DDTHH:MM:SSZ` exactly, a real instant: the form the client signs in proofs, mandates and receipts. */
export function parseRfc3339SecondsUtc(text: unknown, field: string): number {
  if (typeof text !== 'string' || !secondsUtcPattern.test(text)) valueInvalid(field, 'must be RFC 3339 UTC in whole seconds (…:SSZ)');
  const parsed = parseRfc3339(text, field);
  if (parsed.normalized !== text) valueInvalid(field, 'must be RFC 3339 UTC in whole seconds (…:SSZ)');
  return parsed.epochMs;
}

/** The boolean form of parseRfc3339SecondsUtc, for validators that raise their own error. */
export function isRfc3339SecondsUtc(text: unknown): boolean {
  try {
    parseRfc3339SecondsUtc(text, 'timestamp');
    return true;
  } catch (error) {
    if (error instanceof SigningError) return false;
    throw error;
  }
}

/** `YYYY-MM-DDTHH:MM:SS.mmmZ` exactly: the form of ledger `recorded_at`. */
export function parseRfc3339MillisecondsUtc(text: unknown, field: string): number {
  if (typeof text !== 'string' || !millisecondsUtcPattern.test(text)) valueInvalid(field, 'must be RFC 3339 UTC with milliseconds (…:SS.mmmZ)');
  return parseRfc3339(text, field).epochMs;
}

export function formatRfc3339SecondsUtc(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function formatRfc3339MillisecondsUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** Nine digits with trailing zeros removed; nothing at all for a whole second (time's OneOrMore subseconds). */
function fractionText(nanosecond: number): string {
  if (nanosecond === 0) return '';
  return `.${pad(nanosecond, 9).replace(/0+$/, '')}`;
}

/** `Z` for a zero offset (so `+00:00` and `-00:00` become `Z`); otherwise the offset kept as ±HH:MM. */
function offsetText(offsetMinutes: number): string {
  if (offsetMinutes === 0) return 'Z';
  const magnitude = Math.abs(offsetMinutes);
  return `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(magnitude / 60), 2)}:${pad(magnitude % 60, 2)}`;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not. */
function utcEpochMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

function isLastSecondOfUtcMonth(epochMs: number): boolean {
  const date = new Date(epochMs);
  const nextSecond = new Date(epochMs + 1000);
  return date.getUTCHours() === 23 && date.getUTCMinutes() === 59 && date.getUTCSeconds() === 59 &&
    nextSecond.getUTCMonth() !== date.getUTCMonth();
}
