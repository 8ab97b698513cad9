// "Did you mean": the known words closest to a mistyped one, for unknown commands and options.

/** Edits between two words, a swap of two neighbours counting as one (`craete` → `create` is 1). */
export function editDistance(from: string, to: string): number {
  const rows = Array.from({ length: from.length + 1 }, (_, index) => [index, ...Array<number>(to.length).fill(0)]);
  for (let column = 1; column <= to.length; column += 1) rows[0]![column] = column;
  for (let row = 1; row <= from.length; row += 1) {
    for (let column = 1; column <= to.length; column += 1) {
      const cost = from[row - 1] === to[column - 1] ? 0 : 1;
      let best = Math.min(rows[row - 1]![column]! + 1, rows[row]![column - 1]! + 1, rows[row - 1]![column - 1]! + cost);
      if (row > 1 && column > 1 && from[row - 1] === to[column - 2] && from[row - 2] === to[column - 1]) best = Math.min(best, rows[row - 2]![column - 2]! + 1);
      rows[row]![column] = best;
    }
  }
  return rows[from.length]![to.length]!;
}

/** The candidates within a typo's reach of `typed` (one edit for short words, two from five letters on) or that
 * it abbreviates (`--tenant` of `--tenant-id`), closest first; none when nothing is that close. */
export function closestMatches(typed: string, candidates: readonly string[]): string[] {
  const reach = typed.length >= 5 ? 2 : 1;
  const word = typed.toLowerCase();
  const abbreviates = (candidate: string) => word.replace(/^-+/, '').length >= 3 && candidate.startsWith(word);
  return candidates
    .map((candidate) => ({ candidate, distance: abbreviates(candidate) ? 0 : editDistance(word, candidate) }))
    .filter(({ distance }) => distance <= reach)
    .sort((left, right) => left.distance - right.distance)
    .map(({ candidate }) => candidate);
}

/** ` (did you mean "a" or "b"?)`, or nothing. */
export function didYouMean(matches: readonly string[], quote = (word: string) => `"${word}"`): string {
  if (matches.length === 0) return '';
  const shown = matches.slice(0, 3).map(quote);
  return `; did you mean ${shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`}?`;
}
