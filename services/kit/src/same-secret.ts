// Compares a presented credential with the expected one in constant time.
import { timingSafeEqual } from "node:crypto";

export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
