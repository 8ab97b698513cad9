// Settlement configuration: the tenant's rails and where the money goes on each. The API checks the five rules
// (docs/rails.md) and names the field at fault; the page shows its message beside that field.
import type { FastifyInstance } from 'fastify';
import type { ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page } from '../layout.ts';
import { formValue, formValues, getPage, postAction, type FormBody } from '../routing.ts';
import { registeredRails } from '../../../rails/index.ts';
import { railFields } from '../../../rails/settlement-config.ts';

/** The configuration as the API answers it (the rails' fields flat beside `rails`), or as the form was filled. */
interface SettlementView {
  readonly rails: readonly string[];
  readonly updated_at: string | null;
  readonly [field: string]: unknown;
}

/** The rails to choose from and the fields the page edits, as the rails declare them (src/rails/definition.ts). */
const choices = () => registeredRails().map((rail) => [rail.name, rail.consoleLabel] as const);
const editedFields = () => railFields().flatMap(({ field }) => (field.console ? [{ ...field, console: field.console }] : []));

function configForm(context: ConsoleContext, values: SettlementView, error?: ApiError): Html {
  const faultyField = typeof error?.details?.['field'] === 'string' ? (error.details['field'] as string) : undefined;
  const editable = context.may('PUT /v1/admin/settlement/config');
  const disabled = editable ? html`` : html` disabled`;
  const railsError = faultyField === 'rails' ? error!.message : undefined;
  const fields = editedFields();
  const content = html`<fieldset${railsError ? html` aria-describedby="rails-error"` : ''}><legend>Rails</legend>
${choices().map(([rail, label]) => html`<div class="choice"><input type="checkbox" id="rail-${rail}" name="rails" value="${rail}"${values.rails.includes(rail) ? html` checked` : ''}${disabled}><label for="rail-${rail}">${label}</label></div>`)}
${railsError ? html`<p class="field-error" id="rails-error" data-testid="field-error-rails">${railsError}</p>` : ''}</fieldset>
${fields.filter(({ kind }) => kind !== 'flag').map(({ name, console: { label, hint } }) =>
  field({ name, label, hint: hint ?? '', value: typeof values[name] === 'string' ? values[name] : '', error: faultyField === name ? error!.message : undefined, attributes: disabled }),
)}
${fields.filter(({ kind }) => kind === 'flag').map(({ name, console: { label } }) =>
  html`<div class="choice"><input type="checkbox" id="field-${name}" name="${name}" value="true"${values[name] === true ? html` checked` : ''}${disabled}><label for="field-${name}">${label}</label></div>`,
)}
${editable ? html`<button type="submit">Save configuration</button>` : html`<p class="hint">Your role may read this configuration but not change it.</p>`}`;
  return html`${error && !faultyField ? errorBox(error, context.request.id) : ''}${error && faultyField ? html`<div class="error" role="alert" data-testid="error" data-code="${error.code}"><p>The configuration was not saved: see the field marked below.</p><p class="meta">Code <code>${error.code}</code></p></div>` : ''}
${editable ? form(context.csrfToken, '/console/settlement', content, 'settlement') : html`<form class="settlement">${content}</form>`}
${values.updated_at ? html`<p class="hint">Last changed ${when(values.updated_at)}.</p>` : ''}`;
}

const emptyConfig: SettlementView = { rails: [], updated_at: null };

/** The form as the PUT body: the rails checked and each edited field (blank text and unchecked flags as not set). */
function fromForm(body: FormBody): SettlementView {
  const values: Record<string, string | boolean | null> = {};
  for (const { name, kind } of editedFields()) {
    values[name] = kind === 'flag' ? formValue(body, name) === 'true' : formValue(body, name).trim() || null;
  }
  return { rails: formValues(body, 'rails'), ...values, updated_at: null };
}

export async function settlementPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/settlement', async (context) => {
    const answer = await context.api<SettlementView>({ method: 'GET', url: '/v1/admin/settlement/config' });
    const missing = answer.error?.code === 'settlement_config.not_found';
    const top = missing ? notice('No settlement configuration yet: choose the rails this tenant funds with.') : errorBox(answer.error, context.request.id);
    return page(context, 'Settlement configuration', html`${top}${configForm(context, answer.error ? emptyConfig : answer.body)}`);
  });

  postAction(app, '/settlement', async (context, body) => {
    const values = fromForm(body);
    const { updated_at: _updatedAt, ...request } = values;
    const answer = await context.api<SettlementView>({ method: 'PUT', url: '/v1/admin/settlement/config', body: request });
    if (answer.error) return { status: answer.status, html: page(context, 'Settlement configuration', configForm(context, values, answer.error)) };
    return page(context, 'Settlement configuration', html`${notice('Saved.')}${configForm(context, answer.body)}`);
  });
}
