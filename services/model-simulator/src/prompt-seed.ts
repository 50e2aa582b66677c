// Every "random" choice the simulator makes is seeded from the text it answers, so the same
// request always gets the same reply.

/** 32-bit FNV-1a hash of a string. */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Short hex fingerprint used in ids. */
export function fingerprint(text: string): string {
  return hashText(text).toString(16).padStart(8, "0") + hashText("#" + text).toString(16).padStart(8, "0");
}

export interface Dice {
  /** Float in [0, 1). */
  next(): number;
  /** Integer in [min, max]. */
  between(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  shuffled<T>(items: readonly T[]): T[];
}

/** Mulberry32: tiny, fast and good enough for picking words. */
export function diceFor(seedText: string): Dice {
  let state = hashText(seedText);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const between = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    between,
    pick: (items) => items[Math.floor(next() * items.length)],
    shuffled: (items) => {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = between(0, i);
        [copy[i], copy[j]] = [copy[j], copy[i]];
      }
      return copy;
    },
  };
}
