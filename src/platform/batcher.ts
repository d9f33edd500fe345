// Group commit for a hot path's one statement: the items submitted while earlier batches are in flight go
// together in the next one, so N concurrent jobs cost one round trip and one commit instead of N
// (docs/benchmarks.md, "Reading it"). A batch that fails is run again item by item: a statement is atomic,
// so its items are untouched, and one item's failure (a deadlock with another writer, say) stays its own. A
// batcher may instead give every item a failure that is no one item's (`runsAloneAfter`): a connection lost
// mid-statement may hide a commit, and running its items again would act twice.

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export class Batcher<I, O> {
  private queued: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  /**
   * `run` gets the batch's items and answers one output per item, in order. At most `maxInFlight` batches run
   * at once, each of at most `maxSize` items. After a failed batch, its items run again one by one where
   * `runsAloneAfter` says so of its error (always, by default); otherwise each is rejected with that error.
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: { maxSize: number; maxInFlight: number; runsAloneAfter?: (error: unknown) => boolean },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      // The rest of this turn of the event loop joins the batch (jobs whose answers came in together).
      if (!this.scheduled && this.inFlight < this.options.maxInFlight) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    while (this.queued.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.queued.splice(0, this.options.maxSize);
      this.inFlight += 1;
      void this.runBatch(batch).finally(() => {
        this.inFlight -= 1;
        this.flush();
      });
    }
  }

  private async runBatch(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const outputs = await this.run(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, index) => waiting.resolve(outputs[index]!));
    } catch (error) {
      if (batch.length === 1 || this.options.runsAloneAfter?.(error) === false) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      for (const waiting of batch) {
        await this.run([waiting.item]).then(
          ([output]) => waiting.resolve(output!),
          (itemError: unknown) => waiting.reject(itemError),
        );
      }
    }
  }
}
