// Refuses secrets that are placeholders (a database password) or guessable keys (the webhook
// signing key's bytes), so that an unedited or hand-typed value cannot start a process. The
// reasons never contain the value itself.
//
// The rules are tuned so that random values never trip them: a placeholder word of six or more
// letters counts anywhere, a shorter one only as a word of its own.

/** Placeholder words of 6 or more letters: found anywhere in a value. */
const PLACEHOLDER_PHRASES: [name: string, pattern: RegExp][] = [
  ["change-me", /change[-_ .]?me/],
  ["changeit", /change[-_ .]?it(?![a-z])/],
  ["replace", /replace/],
  ["placeholder", /placeholder/],
  ["example", /example/],
  ["secret", /secret/],
  ["password", /passw[o0]rd/],
  ["default", /default/],
  ["insecure", /insecure/],
  // An unexpanded `$(openssl rand -base64 32)` pasted as the value.
  ["openssl", /openssl/],
];

/**
 * Short placeholder words (a random value holds four given letters now and then): only the
 * whole value, or a word of its own between characters other than letters and digits
 * ("a-test-token", "<your-token>").
 */
const PLACEHOLDER_WORDS: [name: string, pattern: RegExp][] = [
  ["test", /^test$/],
  ["todo", /^todo$/],
  ["dummy", /^dummy$/],
  ["fixme", /^fixme$/],
  ["xxxx", /^x{4,}$/],
  ["your-…", /^your$/],
];

/** The placeholder a value is or contains (its name from the list above), else undefined. */
export function placeholderIn(value: string): string | undefined {
  const lower = value.toLowerCase();
  for (const [name, pattern] of PLACEHOLDER_PHRASES) if (pattern.test(lower)) return name;
  const words = lower.split(/[^a-z0-9]+/);
  for (const [name, pattern] of PLACEHOLDER_WORDS) if (words.some((word) => pattern.test(word))) return name;
  return undefined;
}

/**
 * Why the decoded bytes of a key are not fit to be one, or undefined: all bytes alike, a repeated
 * pattern, or fewer than 16 distinct byte values in 32 (random 32 bytes: about 30).
 */
export function secretBytesProblem(bytes: Uint8Array): string | undefined {
  const values = [...bytes];
  const distinct = new Set(values).size;
  if (distinct === 1) return "all its bytes are the same";
  const period = shortestPeriod(values);
  if (period !== undefined) return `it repeats a pattern of ${period} bytes`;
  const fewest = Math.min(16, Math.ceil(values.length / 2));
  if (distinct < fewest) return `too little variety: ${distinct} distinct byte values, at least ${fewest} needed`;
  return undefined;
}

/** The shortest p ≤ length/2 such that the sequence is its first p items repeated, else undefined. */
function shortestPeriod<T>(items: T[]): number | undefined {
  for (let p = 1; p * 2 <= items.length; p++) {
    let repeats = true;
    for (let i = p; i < items.length && repeats; i++) repeats = items[i] === items[i - p];
    if (repeats) return p;
  }
  return undefined;
}
