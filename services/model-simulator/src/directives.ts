// Test directives ride inside the prompt so whole-stack tests can steer the model without a
// side channel: `[[sim:NAME]]` or `[[sim:NAME=VALUE]]`.

const DIRECTIVE = /\[\[sim:([a-z][a-z0-9-]*)(?:=([^\]]*))?\]\]/gi;

export interface Directives {
  echo: boolean;
  fail: boolean;
  failOnce: boolean;
  sleepMs: number;
  words: number | null;
}

export function readDirectives(text: string): Directives {
  const found: Directives = { echo: false, fail: false, failOnce: false, sleepMs: 0, words: null };
  for (const match of text.matchAll(DIRECTIVE)) {
    const name = match[1].toLowerCase();
    const value = match[2]?.trim() ?? "";
    if (name === "echo") found.echo = true;
    else if (name === "fail") found.fail = true;
    else if (name === "fail-once") found.failOnce = true;
    else if (name === "sleep") found.sleepMs = Math.max(0, Math.min(Number.parseInt(value, 10) || 0, 600_000));
    else if (name === "words") {
      const words = Number.parseInt(value, 10);
      if (Number.isFinite(words) && words > 0) found.words = Math.min(words, 12_000);
    }
  }
  return found;
}

/** The text with every directive token cut out and nothing else touched (echo relies on this). */
export function withoutDirectives(text: string): string {
  return text.replace(DIRECTIVE, "");
}
