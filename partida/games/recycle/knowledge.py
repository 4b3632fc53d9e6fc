"""What the table has shown about hidden cards, and deals that agree with it.

Two kinds of public knowledge are kept by a state, so that `determinize` samples only deals a
player at the table could still believe in:

- Voids. When a player chooses, the rules' conditions say what their hidden hand could not have
  held: a heart played to a diamond lead means no diamond, a draw in Crazy Eights means nothing
  playable. This is derived from the description, not written per game: the chosen option is
  tried again against a hypothetical hand holding only the card played (or nothing), and then that
  card plus one card of each kind; every kind whose presence would have made the choice illegal is
  one the hand did not hold. (Sound for rules of the form "this is allowed when the hand holds no
  card of these kinds", which is what following suit, breaking hearts and drawing are; a rule that
  counts cards could yield a void that does not hold.)
  A void is recorded as (kinds, n): at least n of the cards in the location hold none of those
  kinds. n starts as the location's size; a card leaving it lowers n by one unless it is seen face
  up to be of a void kind (then it cannot be one of the n), and cards entering it leave n alone.
- Whereabouts. A seat knows where a hidden card is when it saw the card go there (it passed the
  card, or the card went from the table into a hand); it loses that when a card leaves that
  location unseen, since it no longer knows which one left.

`deal` fills the hidden slots from the unseen cards under these constraints.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

SWAPS_PER_CARD = 3


def slot_masks(voids: Sequence[Sequence[int]], count: int) -> list[int]:
    """The kinds each of `count` slots may not hold: slot i avoids every void with n > i (a void
    covering fewer cards is taken as covering the oldest ones, those every newer void covers too)."""
    masks = [0] * count
    for mask, n in voids:
        for i in range(min(n, count)):
            masks[i] |= mask
    return masks


def deal(bins: list[tuple[int, int]], cards: list[int], kind: Sequence[int], rng: random.Random) -> list[list[int]]:
    """Cards for each bin (kinds it may not hold as a bit mask, how many it takes), every card used.

    Cards in random order each go to a bin that admits them, chosen in proportion to the room
    left (with no constraint, a uniform deal); a card with no room anywhere it fits takes a place
    along an augmenting path (cards moved on to other bins that admit them), so a consistent
    deal is found whenever one exists. Random swaps between bins that keep every constraint then
    mix the result. If there is none (rules whose conditions the void reading does not fit), the
    constraints are dropped."""
    out: list[list[int]] = [[] for _ in bins]
    order = list(cards)
    rng.shuffle(order)
    for c in order:
        fits = [b for b, (mask, size) in enumerate(bins) if not mask >> kind[c] & 1]
        room = [(b, bins[b][1] - len(out[b])) for b in fits if len(out[b]) < bins[b][1]]
        if room:
            pick = rng.randrange(sum(r for _, r in room))
            for b, r in room:
                pick -= r
                if pick < 0:
                    out[b].append(c)
                    break
        elif not _augment(c, bins, out, kind, set(), rng):
            rest = list(cards)
            rng.shuffle(rest)
            return [[rest.pop() for _ in range(size)] for _, size in bins]
    _mix(bins, out, kind, rng)
    return out


def _augment(
    c: int, bins: list[tuple[int, int]], out: list[list[int]], kind: Sequence[int], seen: set[int], rng: random.Random
) -> bool:
    """Place card `c`, moving others along (Kuhn's augmenting path for a many-to-one matching)."""
    fits = [b for b, (mask, _) in enumerate(bins) if not mask >> kind[c] & 1 and b not in seen]
    rng.shuffle(fits)
    for b in fits:
        seen.add(b)
        if len(out[b]) < bins[b][1]:
            out[b].append(c)
            return True
        for i, d in enumerate(out[b]):
            if _augment(d, bins, out, kind, seen, rng):
                out[b][i] = c
                return True
    return False


def _mix(bins: list[tuple[int, int]], out: list[list[int]], kind: Sequence[int], rng: random.Random) -> None:
    spots = [(b, i) for b, cards in enumerate(out) for i in range(len(cards))]
    if len(spots) < 2 or not any(mask for mask, _ in bins):
        return
    for _ in range(SWAPS_PER_CARD * len(spots)):
        (b1, i1), (b2, i2) = rng.sample(spots, 2)
        if b1 == b2:
            continue
        c1, c2 = out[b1][i1], out[b2][i2]
        if not bins[b1][0] >> kind[c2] & 1 and not bins[b2][0] >> kind[c1] & 1:
            out[b1][i1], out[b2][i2] = c2, c1
