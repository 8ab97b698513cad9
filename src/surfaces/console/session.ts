// The console's browser session: the session JWT lives in an HttpOnly cookie (never in the page), and every
// state-changing request carries a CSRF token (a hidden field or the x-csrf-token header) that must equal the
// token in a second HttpOnly cookie, compared in constant time. Both cookies are SameSite=Strict, scoped to
// /console, and Secure unless the browser talks to a loopback address (local development over plain http).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const sessionCookie = 'svc_console_session';
export const csrfCookie = 'svc_console_csrf';
export const csrfField = 'csrf_token';
export const csrfHeader = 'x-csrf-token';
/** The CSRF cookie outlives a session so the sign-in form can carry it too; a day bounds a forgotten tab. */
const csrfCookieLifetimeSeconds = 86_400;
/** 32 random bytes as base64url. */
const csrfTokenPattern = /^[A-Za-z0-9_-]{43}$/;
/** A cookie value longer than this is not ours (session JWTs are well under 2 KiB). */
const cookieValueLengthMax = 4096;

/** The request's cookies, by name; only well-formed `name=value` pairs, the first of each name. */
export function readCookies(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  const header = request.headers.cookie;
  if (typeof header !== 'string') return cookies;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator <= 0) continue;
    const name = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (value.length > cookieValueLengthMax || cookies.has(name)) continue;
    cookies.set(name, value);
  }
  return cookies;
}

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Secure everywhere except a browser on the same machine over plain http, where it would never be sent back. */
export function secureAttribute(request: FastifyRequest): string {
  return request.protocol === 'http' && loopbackHosts.has(request.hostname) ? '' : '; Secure';
}

export function setCookie(reply: FastifyReply, name: string, value: string, maxAgeSeconds: number, options: { path?: string; sameSite?: 'Strict' | 'Lax' } = {}): void {
  const cookie = `${name}=${value}; Path=${options.path ?? '/console'}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=${options.sameSite ?? 'Strict'}${secureAttribute(reply.request)}`;
  const existing = reply.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  reply.header('set-cookie', [...list, cookie]);
}

export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const token = readCookies(request).get(sessionCookie);
  return token === undefined || token === '' ? undefined : token;
}

export function startSession(reply: FastifyReply, accessToken: string, expiresInSeconds: number): void {
  setCookie(reply, sessionCookie, accessToken, expiresInSeconds);
  // A fresh CSRF token with every session, so a token seen before sign-in is not the session's.
  setCookie(reply, csrfCookie, randomBytes(32).toString('base64url'), csrfCookieLifetimeSeconds);
}

export function endSession(reply: FastifyReply): void {
  setCookie(reply, sessionCookie, '', 0);
}

/** The request's CSRF token, minting one (and its cookie) when the browser has none yet. */
export function csrfTokenFor(request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookies(request).get(csrfCookie);
  if (existing !== undefined && csrfTokenPattern.test(existing)) return existing;
  const minted = randomBytes(32).toString('base64url');
  setCookie(reply, csrfCookie, minted, csrfCookieLifetimeSeconds);
  // Later reads in this request see the same token.
  request.headers.cookie = `${request.headers.cookie ?? ''}; ${csrfCookie}=${minted}`;
  return minted;
}

/** Whether a state-changing request carries the token of its own cookie (field or header). */
export function csrfTokenValid(request: FastifyRequest): boolean {
  const expected = readCookies(request).get(csrfCookie);
  const body = request.body as Record<string, unknown> | undefined;
  const fromField = body && typeof body[csrfField] === 'string' ? (body[csrfField] as string) : undefined;
  const fromHeader = typeof request.headers[csrfHeader] === 'string' ? (request.headers[csrfHeader] as string) : undefined;
  const presented = fromField ?? fromHeader;
  if (expected === undefined || presented === undefined || !csrfTokenPattern.test(expected)) return false;
  const expectedBytes = Buffer.from(expected);
  const presentedBytes = Buffer.from(presented);
  return presentedBytes.length === expectedBytes.length && timingSafeEqual(presentedBytes, expectedBytes);
}
