// The pure policy-document module: every problem of a document reported as an issue with its path, the rules against
// the catalogue, the overlay merge (each widening it refuses, each narrowing it applies), and the digest.
import { describe, expect, it } from 'vitest';
import { policyDocumentToolsMax } from '../../src/limits.ts';
import { policyDocumentDigest, policyVersionLabel } from '../../src/policy-document/digest.ts';
import { readPolicyDocument, type PolicyDocument } from '../../src/policy-document/document.ts';
import { mergeOverlay } from '../../src/policy-document/merge.ts';
import { checkPolicyRules } from '../../src/policy-document/rules.ts';

const flat = {
  version: 1,
  name: 'travel-agent',
  default_deny: true,
  tools: {
    'search.flights': { side_effecting: false },
    'book.flight': { side_effecting: true, evidence_preset: 'cost_and_completion', max_spend_cents: 50_000 },
  },
  intent: { policy_binding: { template_id: 'completion_v1' }, budget: { currency: 'usd', max_spend_usd: 400 }, allowed_tools: ['search.flights', 'book.flight'] },
};

const codesOf = (raw: unknown) => readPolicyDocument(raw).issues.map((issue) => `${issue.path} ${issue.code}`);

describe('readPolicyDocument', () => {
  it('reads a valid flat document, and reports nothing', () => {
    const read = readPolicyDocument(flat);
    expect(read.issues).toEqual([]);
    expect(read.document?.name).toBe('travel-agent');
  });

  it('reports every problem with its path, not only the first', () => {
    expect(codesOf({ ...flat, name: 'Travel Agent', default_deny: 'yes', extra: 1, tools: { 'Book!': { side_effecting: true }, 'x.y': { max_spend_cents: -1 } } })).toEqual([
      'name policy.field_format',
      'default_deny policy.field_type',
      'tools.Book! policy.field_format',
      'tools.x.y.side_effecting policy.field_required',
      'tools.x.y.max_spend_cents policy.field_range',
      'extra policy.field_unknown',
    ]);
    expect(codesOf({ ...flat, version: 3 })).toEqual(['version policy.version_unsupported']);
    expect(codesOf([])).toEqual(['(root) policy.field_type']);
    expect(codesOf({ ...flat, intent: { policy_binding: {} } })).toEqual(['intent.policy_binding.template_id policy.field_required']);
  });

  it('checks the rules across fields and the limits', () => {
    expect(codesOf({ ...flat, tools: { 'pay.vendor': { side_effecting: true, max_spend_cents: 5, spend_from_args: 'amount' } } })).toEqual([
      'tools.pay.vendor.evidence_preset policy.missing_evidence_preset',
      'tools.pay.vendor.spend_from_args policy.spend_mode_conflict',
    ]);
    expect(codesOf({ ...flat, tools: {} })).toEqual(['tools policy.tools_empty']);
    // An overlay that extends a base may declare no tools of its own, but its overrides must say something.
    expect(codesOf({ version: 2, name: 'acme-travel', default_deny: false, tools: {}, extends: { org_policy_id: 'completion_v1', org_id: 'org_acme' } })).toEqual([]);
    expect(codesOf({ version: 2, name: 'acme-travel', default_deny: false, tools: {}, extends: { org_policy_id: 'completion_v1', org_id: 'org_acme' }, overrides: {} }))
      .toEqual(['overrides policy.section_empty']);
    const many = Object.fromEntries(Array.from({ length: policyDocumentToolsMax + 1 }, (_, index) => [`tool.t${index}`, { side_effecting: false }]));
    expect(codesOf({ ...flat, tools: many })).toEqual(['tools policy.too_many']);
  });
});

describe('checkPolicyRules', () => {
  const rulesOf = (document: object, strict = false) => {
    const findings = checkPolicyRules(readPolicyDocument(document).document!, { strict });
    return [...findings.errors, ...findings.warnings].map((issue) => `${issue.path} ${issue.code}`);
  };

  it('names unknown presets, vendor packs and allowed tools, and warns of a tool cap above the budget', () => {
    expect(rulesOf(flat)).toEqual(['tools.book.flight.max_spend_cents policy.tool_cap_above_budget']);
    expect(rulesOf({
      ...flat,
      tools: { 'book.flight': { side_effecting: true, evidence_preset: 'no_such_preset', vendor_pack: 'stripe_charge' } },
      intent: { allowed_tools: ['book.flight', 'cancel.flight'] },
    })).toEqual([
      'tools.book.flight.evidence_preset policy.unknown_evidence_preset',
      'tools.book.flight.vendor_pack policy.unknown_vendor_pack',
      'intent.allowed_tools.1 policy.allowed_tool_not_registered',
    ]);
  });

  it('in strict mode, asks every side-effecting tool to be allowed when default_deny holds', () => {
    const document = { ...flat, intent: { allowed_tools: ['search.flights'] } };
    expect(rulesOf(document)).toEqual([]);
    expect(rulesOf(document, true)).toEqual(['tools.book.flight policy.side_effecting_not_allowed']);
    expect(rulesOf({ ...document, default_deny: false }, true)).toEqual([]);
  });
});

describe('mergeOverlay', () => {
  const base: PolicyDocument = {
    version: 1,
    name: 'org-base',
    default_deny: false,
    tools: { 'book.flight': { side_effecting: true, evidence_preset: 'cost_and_completion', max_spend_cents: 50_000 } },
    intent: {
      policy_binding: { template_id: 'completion_v1', version_seq: 3, head_digest: `sha256:${'a'.repeat(64)}` },
      budget: { currency: 'usd', max_spend_usd: 500 },
      allowed_tools: ['book.flight', 'search.flights'],
    },
    adapter: { deny_provider_executed_tools: true },
  };
  const overlay = (fields: Partial<PolicyDocument>): PolicyDocument => ({
    version: 2, name: 'acme-travel', default_deny: false, tools: {}, extends: { org_policy_id: 'org-base', org_id: 'org_acme' }, ...fields,
  });
  const denied = (fields: Partial<PolicyDocument>) => mergeOverlay(base, overlay(fields)).report.denied_widenings.map((issue) => `${issue.path} ${issue.code}`);

  it('applies what narrows: a lower cap, fewer allowed tools, new tools, default deny, a smaller budget', () => {
    const { effective, report } = mergeOverlay(base, overlay({
      tools: { 'search.flights': { side_effecting: false } },
      overrides: { default_deny: true, tools: { 'book.flight': { max_spend_cents: 20_000 } }, intent: { allowed_tools: ['book.flight'], budget: { currency: 'usd', max_spend_usd: 200 } } },
    }));
    expect(report.denied_widenings).toEqual([]);
    expect(report).toMatchObject({ org_policy_id: 'org-base', org_id: 'org_acme', base_policy_name: 'org-base', overlay_policy_name: 'acme-travel' });
    expect(report.overrides_applied).toEqual(['overrides.default_deny', 'tools.book.flight.max_spend_cents', 'intent.budget', 'intent.allowed_tools']);
    expect(effective).toEqual({
      version: 1,
      name: 'acme-travel',
      default_deny: true,
      tools: {
        'book.flight': { side_effecting: true, evidence_preset: 'cost_and_completion', max_spend_cents: 20_000 },
        'search.flights': { side_effecting: false },
      },
      intent: { policy_binding: base.intent!.policy_binding, budget: { currency: 'usd', max_spend_usd: 200 }, allowed_tools: ['book.flight'] },
      adapter: { deny_provider_executed_tools: true },
    });
    // The base is not changed by a merge.
    expect(base.tools['book.flight']!.max_spend_cents).toBe(50_000);
  });

  it('refuses every widening, each with its own code', () => {
    expect(denied({ overrides: { tools: { 'book.flight': { max_spend_cents: 90_000 } } } })).toEqual(['tools.book.flight.max_spend_cents policy.cannot_raise_spend_cap']);
    expect(denied({ overrides: { tools: { 'book.flight': { side_effecting: false } } } })).toEqual(['tools.book.flight.side_effecting policy.cannot_disable_org_side_effecting_tool']);
    expect(denied({ overrides: { tools: { 'book.flight': { spend_from_args: 'amount' } } } })).toEqual(['tools.book.flight.spend_from_args policy.cannot_override_org_spend_mode']);
    expect(denied({ overrides: { tools: { 'hotel.book': { max_spend_cents: 1 } } } })).toEqual(['overrides.tools.hotel.book policy.unknown_org_tool_override']);
    expect(denied({ tools: { 'book.flight': { side_effecting: false } } })).toEqual(['tools.book.flight policy.cannot_replace_org_tool']);
    expect(denied({ intent: { allowed_tools: ['book.flight', 'hotel.book'] } })).toEqual(['intent.allowed_tools policy.cannot_widen_allowed_tools']);
    expect(denied({ intent: { policy_binding: { template_id: 'api_response_v1' } } })).toEqual(['intent.policy_binding.template_id policy.cannot_change_org_template']);
    expect(denied({ intent: { policy_binding: { template_id: 'completion_v1', version_seq: 2 } } })).toEqual(['intent.policy_binding.version_seq policy.cannot_downgrade_template_version']);
    expect(denied({ intent: { policy_binding: { template_id: 'completion_v1', head_digest: `sha256:${'b'.repeat(64)}` } } })).toEqual(['intent.policy_binding.head_digest policy.cannot_change_org_head_digest']);
    expect(denied({ intent: { budget: { currency: 'usd', max_spend_usd: 501 } } })).toEqual(['intent.budget.max_spend_usd policy.cannot_raise_budget_cap']);
    expect(denied({ intent: { budget: { currency: 'eur' } } })).toEqual(['intent.budget.currency policy.cannot_change_org_currency']);
    expect(denied({ adapter: { deny_provider_executed_tools: false } })).toEqual(['adapter.deny_provider_executed_tools policy.cannot_relax_provider_executed_deny']);
  });
});

describe('policyDocumentDigest', () => {
  it('is the same for the same meaning, whatever the key order or empty sections, and differs otherwise', () => {
    const document = readPolicyDocument(flat).document!;
    const reordered = readPolicyDocument(JSON.parse(JSON.stringify({ intent: flat.intent, tools: flat.tools, default_deny: true, name: 'travel-agent', version: 1 }))).document!;
    expect(policyDocumentDigest(reordered)).toBe(policyDocumentDigest(document));
    expect(policyDocumentDigest({ ...document, intent: { ...document.intent, allowed_tools: [] } }))
      .toBe(policyDocumentDigest({ ...document, intent: { policy_binding: document.intent!.policy_binding, budget: document.intent!.budget } }));
    expect(policyDocumentDigest({ ...document, default_deny: false })).not.toBe(policyDocumentDigest(document));
    expect(policyDocumentDigest(document)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(policyVersionLabel('travel-agent', 'sha256:0123456789abcdef')).toBe('travel-agent@01234567');
  });
});
