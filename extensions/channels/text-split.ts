/**
 * Cuts outbound text to a platform's per-message limit: at a paragraph break when one falls in the
 * second half of the allowed length, else a line break, else a space, else hard (never inside a
 * surrogate pair), so a long answer reads as consecutive messages rather than one refused one.
 */
export function splitText(text: string, max: number): string[] {
  if (max < 1) throw new RangeError('max must be positive');
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = -1;
    for (const separator of ['\n\n', '\n', ' ']) {
      const at = rest.lastIndexOf(separator, max - separator.length);
      if (at >= max / 2) {
        cut = at;
        break;
      }
    }
    let next: number;
    if (cut === -1) {
      cut = max;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff && cut > 1) cut--;
      next = cut;
    } else {
      next = cut;
      while (next < rest.length && /\s/.test(rest[next]!)) next++;
    }
    chunks.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(next);
  }
  if (rest.length > 0 || chunks.length === 0) chunks.push(rest);
  return chunks.filter((chunk, index) => chunk.length > 0 || index === 0);
}
