// The release-rule module's public surface: compile a predicate_dsl document once, evaluate it many times,
// and materialize managed templates. Pure: no Fastify, no database, no clock, no I/O.
export type {
  Clause,
  ClauseOp,
  EvaluationInput,
  EvidencePath,
  JsonTypeName,
  JsonValue,
  ParsedPredicate,
  PredicateDocument,
  PredicateEvaluation,
  TraceStep,
  TraceStepData,
} from './ast.ts';
export { clauseOps } from './ast.ts';
export { compilePredicate, type CompiledPredicate } from './compile.ts';
export { PredicateError, predicateErrorCodes, type PredicateErrorCode, type PredicateErrorDetails } from './errors.ts';
export { evaluate } from './evaluate.ts';
export { parsePredicate } from './parse.ts';
export { archetypePresets, findPreset, type ArchetypePreset } from './presets.ts';
export { traceObservedNodesMax, traceObservedStringLengthMax } from './trace.ts';
export {
  findTemplate,
  managedTemplates,
  materializeTemplate,
  releaseModes,
  releaseTermsOf,
  templateCatalog,
  type ReleaseMode,
  type ManagedTemplate,
  type MaterializedTemplate,
  type TemplateParameters,
} from './templates.ts';
