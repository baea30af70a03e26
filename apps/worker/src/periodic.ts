/**
 * Runs `task` every `everyMs` until stop(): each run is timed from the end of the previous one, so runs never
 * overlap, and a failed run is reported to `onError` and the next one still comes. stop() cancels the next run and
 * waits for one in progress. The worker's background loops (outbox sweeper, scheduler keeper, fetch watchdog) use it.
 */
export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** The first run comes after `everyMs`, or at once with `immediately`. */
  start(opts: { immediately?: boolean } = {}) {
    const tick = () => {
      this.timer = null;
      this.running = this.task().then(() => {}, this.onError).finally(() => {
        if (!this.stopping) this.timer = setTimeout(tick, this.everyMs);
      });
    };
    if (opts.immediately) tick();
    else this.timer = setTimeout(tick, this.everyMs);
  }

  /** Whether stop() was called: a long run can end early. */
  get stopped() { return this.stopping; }

  async stop() {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
