// Refuses secrets that are placeholders or guessable, so that an unedited or hand-typed value
// cannot start a process. The reasons never contain the value itself.
//
// The rules are tuned so that random values never trip them: a placeholder word of six or more
// letters counts anywhere, a shorter one only as a word of its own, and the variety thresholds
// follow the alphabet a value is drawn from (random hex has fewer distinct characters than random
// base64 of the same length). A random value of 24 characters or more, hex or base64, is refused
// far less often than once in a million.

/** The fewest characters a secret may have. */
export const MIN_SECRET_LENGTH = 24;

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
 * Why `value` is not fit to be a secret, or undefined when it is: a placeholder, shorter than
 * MIN_SECRET_LENGTH, one character in more than half of it, a repeated pattern, or less variety
 * (distinct characters, Shannon entropy per character) than random text over its alphabet shows.
 */
export function secretProblem(value: string): string | undefined {
  const placeholder = placeholderIn(value);
  if (placeholder !== undefined) return `a placeholder (it contains "${placeholder}"), not a secret`;
  const chars = [...value];
  const n = chars.length;
  if (n < MIN_SECRET_LENGTH) return `too short: ${n} characters, at least ${MIN_SECRET_LENGTH} needed`;

  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (Math.max(...counts.values()) * 2 > n) return "too repetitive: one character makes up more than half of it";
  const period = shortestPeriod(chars);
  if (period !== undefined) return `too repetitive: it repeats a pattern of ${period} characters`;

  const alphabet = alphabetSize(value);
  const fewest = fewestDistinct(n, alphabet);
  if (counts.size < fewest) return `too little variety: ${counts.size} distinct characters, at least ${fewest} needed`;
  let entropy = 0;
  for (const count of counts.values()) entropy -= (count / n) * Math.log2(count / n);
  // 3 bits per character for base64-like values; half the alphabet's bits for narrower ones (hex: 2).
  const least = Math.min(3, Math.log2(alphabet) / 2);
  if (entropy < least) return `too predictable: about ${entropy.toFixed(1)} bits of entropy per character, at least ${least.toFixed(1)} needed`;
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

/**
 * The size of the alphabet a value seems drawn from: digits (10), lower- and upper-case letters
 * (6 each when the value holds digits and no letter beyond f, as hex does; else 26) and each other
 * character it holds.
 */
function alphabetSize(value: string): number {
  const digits = /[0-9]/.test(value);
  const letters = digits && !/[g-z]/i.test(value) ? 6 : 26;
  let size = 0;
  if (digits) size += 10;
  if (/[a-z]/.test(value)) size += letters;
  if (/[A-Z]/.test(value)) size += letters;
  size += new Set(value.replace(/[A-Za-z0-9]/g, "")).size;
  return size;
}

/**
 * The distinct characters required of a value of `length` over `alphabet`: 10, or fewer when
 * random text of that kind would show fewer than 10 more often than once in a billion. The chance
 * that random text uses at most d of k characters is at most C(k, d)·(d/k)^length.
 */
function fewestDistinct(length: number, alphabet: number): number {
  for (let required = Math.min(10, alphabet); required > 1; required--) {
    const d = required - 1;
    if (choose(alphabet, d) * (d / alphabet) ** length <= 1e-9) return required;
  }
  return 1;
}

function choose(n: number, k: number): number {
  let result = 1;
  for (let i = 0; i < k; i++) result = (result * (n - i)) / (i + 1);
  return result;
}
