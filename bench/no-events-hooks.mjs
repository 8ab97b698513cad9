// Module resolution hooks of bench/no-events.ts (registered by it, after tsx's): the service's two event-writing
// modules resolve to their no-op stand-ins in bench/no-events-modules/, except when a stand-in imports the real
// module to re-export the rest of it. Plain JavaScript: hooks run in the loader's own thread.
const standIns = new Map([
  ['/src/db/event-repository.ts', new URL('./no-events-modules/event-repository.ts', import.meta.url).href],
  ['/src/engine/intent-events.ts', new URL('./no-events-modules/intent-events.ts', import.meta.url).href],
]);
const standInUrls = new Set(standIns.values());

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (context.parentURL !== undefined && standInUrls.has(context.parentURL)) return resolved;
  const path = new URL(resolved.url).pathname;
  for (const [suffix, standIn] of standIns) {
    if (path.endsWith(suffix)) return { ...resolved, url: standIn, shortCircuit: true };
  }
  return resolved;
}
