// Settlement configuration: the tenant's rails and where the money goes on each. The API checks the five rules
// (docs/rails.md) and names the field at fault; the page shows its message beside that field.
import type { FastifyInstance } from 'fastify';
import type { ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page } from '../layout.ts';
import { formValue, formValues, getPage, postAction, type FormBody } from '../routing.ts';

interface SettlementView {
  rails: string[];
  x402_address: string | null;
  mpp_profile_id: string | null;
  mpp_session_enabled: boolean;
  settlement_network_recipient: string | null;
  processor_destination: string | null;
  updated_at: string | null;
}

const rails = [
  ['x402_usdc_base', 'x402 (USDC on Base)'],
  ['processor_mpp', 'Card processor (MPP)'],
] as const;

const textFields = [
  ['x402_address', 'x402 receiving address', '0x and 40 hex digits.'],
  ['mpp_profile_id', 'MPP profile id', 'profile_test_… in sandbox, profile_… in live.'],
  ['processor_destination', 'Processor destination', 'The processor account that receives card payouts, e.g. acct_….'],
  ['settlement_network_recipient', 'Settlement network recipient', 'Needed when MPP sessions are on: 0x and 40 hex digits.'],
] as const;

function configForm(context: ConsoleContext, values: SettlementView, error?: ApiError): Html {
  const faultyField = typeof error?.details?.['field'] === 'string' ? (error.details['field'] as string) : undefined;
  const editable = context.may('PUT /v1/admin/settlement/config');
  const disabled = editable ? html`` : html` disabled`;
  const railsError = faultyField === 'rails' ? error!.message : undefined;
  const content = html`<fieldset${railsError ? html` aria-describedby="rails-error"` : ''}><legend>Rails</legend>
${rails.map(([rail, label]) => html`<div class="choice"><input type="checkbox" id="rail-${rail}" name="rails" value="${rail}"${values.rails.includes(rail) ? html` checked` : ''}${disabled}><label for="rail-${rail}">${label}</label></div>`)}
${railsError ? html`<p class="field-error" id="rails-error" data-testid="field-error-rails">${railsError}</p>` : ''}</fieldset>
${textFields.map(([name, label, hint]) =>
  field({ name, label, hint, value: values[name] ?? '', error: faultyField === name ? error!.message : undefined, attributes: disabled }),
)}
<div class="choice"><input type="checkbox" id="field-mpp_session_enabled" name="mpp_session_enabled" value="true"${values.mpp_session_enabled ? html` checked` : ''}${disabled}><label for="field-mpp_session_enabled">MPP sessions enabled</label></div>
${editable ? html`<button type="submit">Save configuration</button>` : html`<p class="hint">Your role may read this configuration but not change it.</p>`}`;
  return html`${error && !faultyField ? errorBox(error, context.request.id) : ''}${error && faultyField ? html`<div class="error" role="alert" data-testid="error" data-code="${error.code}"><p>The configuration was not saved: see the field marked below.</p><p class="meta">Code <code>${error.code}</code></p></div>` : ''}
${editable ? form(context.csrfToken, '/console/settlement', content, 'settlement') : html`<form class="settlement">${content}</form>`}
${values.updated_at ? html`<p class="hint">Last changed ${when(values.updated_at)}.</p>` : ''}`;
}

const emptyConfig: SettlementView = { rails: [], x402_address: null, mpp_profile_id: null, mpp_session_enabled: false, settlement_network_recipient: null, processor_destination: null, updated_at: null };

function fromForm(body: FormBody): SettlementView {
  const text = (name: string) => formValue(body, name).trim() || null;
  return {
    rails: formValues(body, 'rails'),
    x402_address: text('x402_address'),
    mpp_profile_id: text('mpp_profile_id'),
    mpp_session_enabled: formValue(body, 'mpp_session_enabled') === 'true',
    settlement_network_recipient: text('settlement_network_recipient'),
    processor_destination: text('processor_destination'),
    updated_at: null,
  };
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
