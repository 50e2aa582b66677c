// Tests ask "how many times did the model see this prompt?" to check retries and caching, so every
// chat completion call is counted by its last user message.

export interface PromptCount {
  prompt: string;
  count: number;
}

export class CallCounter {
  private readonly counts = new Map<string, number>();

  record(prompt: string): void {
    this.counts.set(prompt, (this.counts.get(prompt) ?? 0) + 1);
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
