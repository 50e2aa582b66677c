// Gathers what the work in flight asks of another service or the database into one call (the
// dispatcher's deliveries, accounts-billing's word reservations): the asks of one turn of the
// event loop leave together, and those made while a call is under way wait for it and leave
// together next. Under load the batches grow by themselves; a lone ask waits for nothing but the
// turn it is in.

/** Per input, in order: its answer, or the Error that fails that input alone. */
export type BatchAnswers<O> = (O | Error)[];

interface Ask<I, O> {
  input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

export class CallBatches<I, O> {
  private waiting: Ask<I, O>[] = [];
  private running = 0;
  private scheduled = false;

  /**
   * `call` answers a batch of inputs; when it throws, every input of the batch fails with that
   * error (e.g. the service is unavailable). At most `maxSize` inputs per call, `maxRunning` calls at once.
   */
  constructor(
    private readonly call: (inputs: I[]) => Promise<BatchAnswers<O>>,
    private readonly limits: { maxSize: number; maxRunning: number },
  ) {}

  ask(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.send();
        });
      }
    });
  }

  private send(): void {
    while (this.running < this.limits.maxRunning && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.limits.maxSize);
      this.running++;
      this.answer(batch).finally(() => {
        this.running--;
        this.send();
      });
    }
  }

  private async answer(batch: Ask<I, O>[]): Promise<void> {
    try {
      const answers = await this.call(batch.map((ask) => ask.input));
      batch.forEach((ask, i) => {
        const answer = answers[i];
        if (answer instanceof Error) ask.reject(answer);
        else ask.resolve(answer as O);
      });
    } catch (error) {
      for (const ask of batch) ask.reject(error);
    }
  }
}
