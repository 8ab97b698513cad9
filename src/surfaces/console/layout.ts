// The frame every console page shares (skip link, navigation, sign-out) and the small pieces pages are made of:
// forms that carry the CSRF token, labelled fields with their error beside them, tables with an empty state.
import type { ApiError } from './api.ts';
import type { ConsoleContext } from './context.ts';
import { html, type Html, type HtmlValue } from './html.ts';
import { csrfField } from './session.ts';

interface NavigationEntry {
  readonly href: string;
  readonly label: string;
  /** The read route the page needs; a role that may not call it does not see the entry. */
  readonly needs?: string;
}

const navigation: readonly NavigationEntry[] = [
  { href: '/console', label: 'Overview' },
  { href: '/console/intents', label: 'Intents', needs: 'GET /harbor/intents' },
  { href: '/console/api-keys', label: 'API keys', needs: 'GET /v1/admin/api-keys' },
  { href: '/console/registered-keys', label: 'Registered keys', needs: 'GET /v1/registry/keys' },
  { href: '/console/policies', label: 'Policies', needs: 'GET /harbor/policy/v1/templates' },
  { href: '/console/settlement', label: 'Settlement', needs: 'GET /v1/admin/settlement/config' },
  { href: '/console/exports', label: 'Audit exports', needs: 'GET /v1/compliance/audit-exports' },
  { href: '/console/webhooks', label: 'Webhooks', needs: 'GET /v1/webhook-endpoints' },
  { href: '/console/review', label: 'Review queue', needs: 'GET /signal/v1/review-queue' },
  { href: '/console/usage', label: 'Usage', needs: 'GET /harbor/intents' },
  { href: '/console/standing', label: 'Standing', needs: 'GET /reputation/:operator_did' },
  { href: '/console/device', label: 'Device login' },
];

function document(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · svc console</title>
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${body}
</body>
</html>`;
}

/** A page of the signed-in console. */
export function page(context: ConsoleContext, title: string, content: Html): Html {
  const { viewer } = context;
  const path = context.request.url.split('?')[0];
  const links = navigation
    .filter((entry) => entry.needs === undefined || context.may(entry.needs))
    .map((entry) => {
      const current = entry.href === path || (entry.href !== '/console' && path!.startsWith(`${entry.href}/`));
      return html`<li><a href="${entry.href}"${current ? html` aria-current="page"` : ''}>${entry.label}</a></li>`;
    });
  return document(
    title,
    html`<header class="top">
<span class="brand">svc console</span>
<span class="who" data-testid="who">${viewer.tenantId} · ${viewer.environment} · <strong data-testid="role">${viewer.role}</strong></span>
${form(context.csrfToken, '/console/sign-out', html`<button type="submit" class="link">Sign out</button>`, 'sign-out')}
</header>
<nav aria-label="Console"><ul>${links}</ul></nav>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${content}
</main>`,
  );
}

/** A page shown before sign-in (sign-in itself, errors without a session). */
export function barePage(title: string, content: Html): Html {
  return document(title, html`<header class="top"><span class="brand">svc console</span></header><main id="main" tabindex="-1" class="narrow"><h1>${title}</h1>${content}</main>`);
}

/** A POST form with the CSRF token in a hidden field. */
export function form(csrfToken: string, action: string, content: HtmlValue, className = ''): Html {
  return html`<form method="post" action="${action}"${className ? html` class="${className}"` : ''}>
<input type="hidden" name="${csrfField}" value="${csrfToken}">
${content}
</form>`;
}

/** An error from the API in words: the catalogue's message, its code for support, and the request id. */
export function errorBox(error: ApiError | undefined, requestId?: string): Html {
  if (!error) return html``;
  return html`<div class="error" role="alert" data-testid="error" data-code="${error.code}">
<p>${error.message}</p>
<p class="meta">Code <code>${error.code}</code>${requestId ? html` · request <code>${requestId}</code>` : ''}</p>
</div>`;
}

export function notice(text: HtmlValue): Html {
  return html`<div class="notice" role="status" data-testid="notice">${text}</div>`;
}

interface FieldOptions {
  readonly name: string;
  /** When one page has several forms with a field of this name (one per row): the control's id. */
  readonly id?: string;
  readonly label: string;
  readonly value?: string;
  readonly type?: string;
  readonly hint?: string;
  readonly error?: string;
  readonly required?: boolean;
  readonly attributes?: Html;
}

/** A labelled input; its error, when there is one, sits right under it and is tied to it for screen readers. */
export function field(options: FieldOptions): Html {
  const id = options.id ?? `field-${options.name}`;
  const described = [options.hint ? `${id}-hint` : '', options.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${options.error ? ' invalid' : ''}">
<label for="${id}">${options.label}</label>
<input id="${id}" name="${options.name}" type="${options.type ?? 'text'}" value="${options.value ?? ''}"${options.required ? html` required` : ''}${described ? html` aria-describedby="${described}"` : ''}${options.error ? html` aria-invalid="true"` : ''}${options.attributes ?? ''}>
${options.hint ? html`<p class="hint" id="${id}-hint">${options.hint}</p>` : ''}
${options.error ? html`<p class="field-error" id="${id}-error" data-testid="field-error-${options.name}">${options.error}</p>` : ''}
</div>`;
}

export interface SelectOptions {
  readonly name: string;
  /** When one page has two controls of the same name (a filter and a form). */
  readonly id?: string;
  readonly label: string;
  readonly options: readonly (readonly [value: string, label: string])[];
  readonly value?: string;
}

export function select(options: SelectOptions): Html {
  const id = options.id ?? `field-${options.name}`;
  return html`<div class="field"><label for="${id}">${options.label}</label>
<select id="${id}" name="${options.name}">${options.options.map(([value, label]) => html`<option value="${value}"${value === options.value ? html` selected` : ''}>${label}</option>`)}</select></div>`;
}

/** A secret the API answers once (a new API key, a webhook endpoint's signing secret): shown in the answer to the
 * form that made it, never in a URL nor again, with a copy button. `name` names the section and its input
 * (`data-testid` `name` and `name-secret`). */
export function shownOnce(options: { readonly name: string; readonly heading: string; readonly kept: string; readonly label: Html; readonly secret: string }): Html {
  const input = `${options.name}-secret`;
  return html`<section class="card secret" aria-labelledby="${options.name}-heading" data-testid="${options.name}">
<h2 id="${options.name}-heading">${options.heading}</h2>
<p><strong>Copy it now: it is shown only this once.</strong> ${options.kept}</p>
<div class="copy-row"><label for="${input}">${options.label}</label>
<input id="${input}" readonly value="${options.secret}" data-testid="${input}" autocomplete="off" spellcheck="false">
<button type="button" data-copy="#${input}">Copy</button></div>
</section>`;
}

/** A table with a caption, or the empty state when there are no rows. */
export function table(caption: string, headings: readonly string[], rows: readonly Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty" data-testid="empty">${empty}</p>`;
  return html`<div class="table-wrap"><table>
<caption>${caption}</caption>
<thead><tr>${headings.map((heading) => html`<th scope="col">${heading}</th>`)}</tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}
