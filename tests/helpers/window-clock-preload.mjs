// Loaded into a test's child server with `--import` (see windowClockEnv in rate-limit-clock.ts):
// the child's clock, movable by the test. It reads the real time plus an offset, at the real pace;
// on SIGUSR2 the offset moves the clock to just after the start of the next rate-limit window and
// the child says so on stdout ("window clock moved <n> to <epoch ms>"), so the test knows it applied. Only `Date`
// changes (timers stay real); a child that never gets the signal keeps the real time.
const RealDate = Date;
const WINDOW_MS = Number(process.env.TDP_WINDOW_CLOCK_MS || 60_000);
let offset = 0;
let moves = 0;

function ShiftedDate(...args) {
  if (!new.target) return new RealDate(RealDate.now() + offset).toString();
  return args.length ? new RealDate(...args) : new RealDate(RealDate.now() + offset);
}
ShiftedDate.prototype = RealDate.prototype;
ShiftedDate.now = () => RealDate.now() + offset;
ShiftedDate.parse = RealDate.parse;
ShiftedDate.UTC = RealDate.UTC;
globalThis.Date = ShiftedDate;

process.on("SIGUSR2", () => {
  const now = ShiftedDate.now();
  offset += Math.ceil(now / WINDOW_MS) * WINDOW_MS + 50 - now;
  process.stdout.write(`window clock moved ${++moves} to ${ShiftedDate.now()}\n`);
});
