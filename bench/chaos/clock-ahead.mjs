// Preloaded (node --import) into a worker whose clock must run ahead: Date.now(), new Date() and Date() read
// the real time plus CHAOS_CLOCK_SHIFT_MS. performance.now() is left alone: it is monotonic, measured from the
// process's start, not a wall clock, and a skewed wall clock does not change it.
const shift = Number(process.env.CHAOS_CLOCK_SHIFT_MS ?? 0);
const RealDate = Date;
function ShiftedDate(...args) {
  if (!new.target) return new RealDate(RealDate.now() + shift).toString();
  return args.length === 0 ? new RealDate(RealDate.now() + shift) : new RealDate(...args);
}
ShiftedDate.prototype = RealDate.prototype;
Object.setPrototypeOf(ShiftedDate, RealDate);
ShiftedDate.now = () => RealDate.now() + shift;
ShiftedDate.parse = RealDate.parse;
ShiftedDate.UTC = RealDate.UTC;
globalThis.Date = ShiftedDate;
