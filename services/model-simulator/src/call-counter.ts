// Tests ask "how many times did the model see this prompt?" to check retries and caching, so every
// chat completion call is counted by its last user message. The count keeps the most recent
// prompts only (50,000 by default), so a stack left running under load does not grow without end
// (at 250 articles a second, every prompt kept would be about 50 KB a second).

export interface PromptCount {
  prompt: string;
  count: number;
}

export class CallCounter {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit = 50_000) {}

  record(prompt: string): void {
    const count = this.counts.get(prompt);
    if (count === undefined && this.counts.size >= this.limit) {
      // A Map iterates in insertion order: the first key is the prompt first seen longest ago.
      this.counts.delete(this.counts.keys().next().value!);
    }
    this.counts.set(prompt, (count ?? 0) + 1);
  }

  /** Counts in first-seen order, optionally only prompts containing `contains`. */
  report(contains?: string): { calls: PromptCount[]; total: number } {
    const calls: PromptCount[] = [];
    for (const [prompt, count] of this.counts) {
      if (contains === undefined || prompt.includes(contains)) calls.push({ prompt, count });
    }
    return { calls, total: calls.reduce((sum, c) => sum + c.count, 0) };
  }

  reset(): void {
    this.counts.clear();
  }
}
