// A time control as people write it: the notation of partida/room/clock_notation.py, which
// every command-line flag uses; both are checked against tests/data/clock_notation.json.
// `5+3` is 5 minutes and 3 s added a move (Lichess's way), `2s+0.05` a short clock with its
// unit, `move:30` 30 s for every move. The wire keeps seconds: {initial, increment} or {per_move}.

export const FORMS =
  "write MINUTES+SECONDS as Lichess does (5+3: 5 minutes, 3 s added a move), a unit for a short clock " +
  "(2s+0.05: 2 seconds, 0.05 s a move) or move:SECONDS (move:30: 30 s for every move)";

const UNITS = { ms: 0.001, s: 1, sec: 1, m: 60, min: 60, h: 3600 };
const TERM = /^(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)$/;
const DAY = 86400;

export class BadClockText extends Error {}

function seconds(term, defaultUnit) {
  const found = TERM.exec(term.trim());
  if (!found || (found[2] && !(found[2] in UNITS))) throw new RangeError(term);
  return [Number(found[1]) * UNITS[found[2] || defaultUnit], Boolean(found[2])];
}

function checked(name, value, zeroOk) {
  if (value < 0 || (value === 0 && !zeroOk)) throw new BadClockText(`clock '${name}' must be ${zeroOk ? "0 seconds or more" : "more than 0 seconds"}, not ${value}`);
  if (value > DAY) throw new BadClockText(`clock '${name}' must be at most a day (${DAY} seconds), not ${value}`);
  return value;
}

// The protocol's clock for `text`; BadClockText, whose message ends with the accepted forms.
export function parseClock(text) {
  const raw = String(text).trim();
  const written = raw.toLowerCase();
  try {
    if (written.startsWith("move:")) return { per_move: checked("per_move", seconds(written.slice(5), "s")[0], false) };
    const plus = written.indexOf("+");
    const [initial, unit] = seconds(plus < 0 ? written : written.slice(0, plus), "m");
    if (plus < 0 && !unit) throw new RangeError(written); // `300` could be minutes or seconds: not guessed
    const increment = plus < 0 ? 0 : seconds(written.slice(plus + 1), "s")[0];
    return { initial: checked("initial", initial, false), increment: checked("increment", increment, true) };
  } catch (error) {
    if (error instanceof BadClockText) throw new BadClockText(`'${raw}' is not a clock to play with (${error.message}); ${FORMS}`);
    throw new BadClockText(`'${raw}' is not a clock: ${FORMS}`);
  }
}

function number(value) {
  return String(Number(value.toPrecision(6)));
}

// The notation of a protocol clock, as parseClock reads it back; "no clock" for none.
export function clockText(clock) {
  if (!clock) return "no clock";
  if (clock.per_move !== undefined && clock.per_move !== null) return `move:${number(clock.per_move)}`;
  const initial = clock.initial || 0;
  const increment = clock.increment || 0;
  if ((initial * 4) % 60 === 0) return `${number(initial / 60)}+${number(increment)}`;
  return `${number(initial)}s+${number(increment)}`;
}
