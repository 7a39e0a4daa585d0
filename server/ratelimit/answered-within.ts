// A store call's timeout that a busy process cannot mistake for a slow store.

export class StoreTimeoutError<T = unknown> extends Error {
  override name = "TimeoutError";
  /**
   * The call given up on, still running: a slow store may yet apply it (fallback-store.ts gives
   * back a count the store makes after the request was decided elsewhere).
   */
  readonly late: Promise<T>;
  constructor(message: string, late: Promise<T>) {
    super(message);
    this.late = late;
  }
}

/**
 * `work`, or a TimeoutError after `ms` without an answer, judged only after this process has read
 * its sockets once more: the timer of a busy process (a burst, a loaded machine) fires late, when
 * the reply may already wait in the socket; failing it then would put the limits in memory because
 * this process was slow, not the store (fallback-store.ts). Timers run before the event loop's I/O
 * phase and `setImmediate` after it, so the verdict waits for that one read.
 */
export function answeredWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new StoreTimeoutError(`the rate-limit store did not answer within ${ms} ms`, work));
        }),
      ms,
    );
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
