/** Runs work one at a time per key within the process; different keys run side by side. */
export class KeyedMutex {
  private readonly tails = new Map<string | number, Promise<unknown>>();

  run<T>(key: string | number, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.tails.set(key, next);
    void next
      .finally(() => {
        if (this.tails.get(key) === next) this.tails.delete(key);
      })
      .catch(() => undefined);
    return next;
  }
}
