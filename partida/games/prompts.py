"""Decisions as typed prompts.

Some decision spaces are huge (choosing attackers is 2^N, blocks (N+1)^M), so a decision is not
an enumerated action list but a prompt that validates an answer and can enumerate its answers
when they are few. Four shapes cover every game here:

- `ChooseOne(options)`: the answer is one of the options (a square, a card id, "keep").
- `ChooseSubset(candidates, min, max)`: the answer is a list of distinct candidates.
- `Assign(sources, targets)`: the answer is a list of `[source, target]` pairs, each source at
  most once, each target one of that source's allowed targets (blockers to attackers).
- `Order(items)`: the answer is a permutation of the items (damage order).

Prompts travel to clients as plain data (`to_data` / `prompt_from_data`), so a bot in another
process validates and enumerates with the same code as the server.
"""

from __future__ import annotations

import itertools
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any, ClassVar

ENUMERATION_LIMIT = 4096


def freeze(value: Any) -> Any:
    """A hashable key for a plain value (lists and dicts become tuples). Booleans and floats are
    tagged, so `true` and `5.0` are not taken for the integers 1 and 5 (they hash and compare
    equal in Python, but are other values on the wire and in storage)."""
    if isinstance(value, bool | float):
        return (type(value).__name__, value)
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    return value


def thaw(value: Any) -> Any:
    """Tuples back to lists, so actions compare equal after a trip through MessagePack."""
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


def _illegal(message: str) -> Exception:
    from partida.games.base import IllegalAction

    return IllegalAction(message, code="illegal_action")


@dataclass(frozen=True)
class Prompt(ABC):
    """What a seat is asked. `name` says which decision in the game's own words ("move",
    "mulligan", "attackers"); `text` is a sentence for people."""

    name: str
    text: str = ""
    kind: ClassVar[str] = ""

    @abstractmethod
    def validate(self, action: Any) -> Any:
        """The answer in canonical form, or `IllegalAction` with a sentence saying why not."""

    @abstractmethod
    def answers(self, limit: int = ENUMERATION_LIMIT) -> list[Any] | None:
        """Every legal answer, or None when there are more than `limit`."""

    @abstractmethod
    def random_answer(self, rng: random.Random) -> Any:
        """A uniformly random legal answer (a uniformly random subset for subset prompts)."""

    @abstractmethod
    def _fields(self) -> dict[str, Any]: ...

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "text": self.text, **self._fields()}

    def parse(self, text: str) -> Any:
        """Read an answer typed by a person: JSON, or a bare word for a string option."""
        text = text.strip()
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text


@dataclass(frozen=True)
class ChooseOne(Prompt):
    options: list[Any] = field(default_factory=list)
    labels: list[str] | None = None
    kind: ClassVar[str] = "choose_one"

    @property
    def _keys(self) -> dict[Any, int]:
        """Each option's index by its frozen form, built on first use: a server builds a prompt
        for every decision it shows, and checks an answer against few of them."""
        keys = self.__dict__.get("_index")
        if keys is None:
            keys = {freeze(o): i for i, o in enumerate(self.options)}
            object.__setattr__(self, "_index", keys)
        return keys

    def validate(self, action: Any) -> Any:
        if type(action) is int or type(action) is str:
            # Most answers (a square, a card id) are one integer or string: found by a scan in
            # C, without building the index of a prompt that is checked once. An equal option of
            # another type (True for 1) is no match; the index below tells them apart.
            try:
                found = self.options[self.options.index(action)]
            except ValueError:
                found = None
            if type(found) is type(action):
                return found
        try:
            index = self._keys.get(freeze(action))
        except TypeError:
            index = None
        if index is None:
            shown = ", ".join(map(str, self.options[:12])) + (" ..." if len(self.options) > 12 else "")
            raise _illegal(f"{action!r} is not one of the choices ({shown})")
        return self.options[index]

    def answers(self, limit: int = ENUMERATION_LIMIT) -> list[Any] | None:
        return list(self.options) if len(self.options) <= limit else None

    def random_answer(self, rng: random.Random) -> Any:
        return rng.choice(self.options)

    def label(self, option: Any) -> str:
        if self.labels is not None:
            return self.labels[self._keys[freeze(option)]]
        return str(option)

    def _fields(self) -> dict[str, Any]:
        data: dict[str, Any] = {"options": list(self.options)}
        if self.labels is not None:
            data["labels"] = list(self.labels)
        return data


@dataclass(frozen=True)
class ChooseSubset(Prompt):
    candidates: list[Any] = field(default_factory=list)
    min: int = 0
    max: int | None = None
    labels: list[str] | None = None
    kind: ClassVar[str] = "choose_subset"

    @property
    def upper(self) -> int:
        return len(self.candidates) if self.max is None else min(self.max, len(self.candidates))

    def validate(self, action: Any) -> Any:
        if not isinstance(action, list | tuple):
            raise _illegal(f"the answer must be a list of choices, not {action!r}")
        keys = {freeze(c): i for i, c in enumerate(self.candidates)}
        chosen: set[int] = set()
        for item in action:
            try:
                index = keys.get(freeze(item))
            except TypeError:
                index = None
            if index is None:
                raise _illegal(f"{item!r} is not one of the candidates")
            if index in chosen:
                raise _illegal(f"{item!r} is chosen twice")
            chosen.add(index)
        if not self.min <= len(chosen) <= self.upper:
            raise _illegal(f"choose between {self.min} and {self.upper} items, not {len(chosen)}")
        return [self.candidates[i] for i in sorted(chosen)]

    def answers(self, limit: int = ENUMERATION_LIMIT) -> list[Any] | None:
        n = len(self.candidates)
        count = sum(comb(n, k) for k in range(self.min, self.upper + 1))
        if count > limit:
            return None
        return [
            [self.candidates[i] for i in combo]
            for k in range(self.min, self.upper + 1)
            for combo in itertools.combinations(range(n), k)
        ]

    def random_answer(self, rng: random.Random) -> Any:
        n, lo, hi = len(self.candidates), self.min, self.upper
        if lo == 0 and hi == n:
            return [c for c in self.candidates if rng.random() < 0.5]
        sizes = list(range(lo, hi + 1))
        k = rng.choices(sizes, weights=[comb(n, s) for s in sizes])[0]
        picked = sorted(rng.sample(range(n), k))
        return [self.candidates[i] for i in picked]

    def _fields(self) -> dict[str, Any]:
        data: dict[str, Any] = {"candidates": list(self.candidates), "min": self.min, "max": self.upper}
        if self.labels is not None:
            data["labels"] = list(self.labels)
        return data


@dataclass(frozen=True)
class Assign(Prompt):
    """`targets[i]` lists the allowed targets of `sources[i]`. Sources left out of the answer are
    unassigned; `required` demands that every source be assigned."""

    sources: list[Any] = field(default_factory=list)
    targets: list[list[Any]] = field(default_factory=list)
    required: bool = False
    kind: ClassVar[str] = "assign"

    def validate(self, action: Any) -> Any:
        if not isinstance(action, list | tuple):
            raise _illegal(f"the answer must be a list of [source, target] pairs, not {action!r}")
        index = {freeze(s): i for i, s in enumerate(self.sources)}
        chosen: dict[int, Any] = {}
        for pair in action:
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise _illegal(f"{pair!r} is not a [source, target] pair")
            source, target = pair
            try:
                i = index.get(freeze(source))
            except TypeError:
                i = None
            if i is None:
                raise _illegal(f"{source!r} cannot be assigned")
            if i in chosen:
                raise _illegal(f"{source!r} is assigned twice")
            allowed = {freeze(t): t for t in self.targets[i]}
            try:
                ok = freeze(target) in allowed
            except TypeError:
                ok = False
            if not ok:
                raise _illegal(f"{source!r} cannot be assigned to {target!r}")
            chosen[i] = allowed[freeze(target)]
        if self.required and len(chosen) != len(self.sources):
            raise _illegal("every source must be assigned")
        return [[self.sources[i], chosen[i]] for i in sorted(chosen)]

    def answers(self, limit: int = ENUMERATION_LIMIT) -> list[Any] | None:
        extra = 0 if self.required else 1
        count = 1
        for allowed in self.targets:
            count *= len(allowed) + extra
            if count > limit:
                return None
        choices = [([None] if not self.required else []) + list(t) for t in self.targets]
        result = []
        for combo in itertools.product(*choices):
            result.append([[s, t] for s, t in zip(self.sources, combo, strict=True) if t is not None])
        return result

    def random_answer(self, rng: random.Random) -> Any:
        pairs = []
        for source, allowed in zip(self.sources, self.targets, strict=True):
            options = list(allowed) + ([] if self.required else [None])
            target = rng.choice(options) if options else None
            if target is not None:
                pairs.append([source, target])
        return pairs

    def _fields(self) -> dict[str, Any]:
        return {"sources": list(self.sources), "targets": [list(t) for t in self.targets], "required": self.required}


@dataclass(frozen=True)
class Order(Prompt):
    items: list[Any] = field(default_factory=list)
    kind: ClassVar[str] = "order"

    def validate(self, action: Any) -> Any:
        if not isinstance(action, list | tuple) or len(action) != len(self.items):
            raise _illegal(f"the answer must list all {len(self.items)} items in order")
        try:
            if sorted(map(freeze, action), key=repr) != sorted(map(freeze, self.items), key=repr):
                raise _illegal("the answer must be a reordering of the items")
        except TypeError:
            raise _illegal("the answer must be a reordering of the items") from None
        return thaw(list(action))

    def answers(self, limit: int = ENUMERATION_LIMIT) -> list[Any] | None:
        count = 1
        for k in range(2, len(self.items) + 1):
            count *= k
        if count > limit:
            return None
        return [list(p) for p in itertools.permutations(self.items)]

    def random_answer(self, rng: random.Random) -> Any:
        items = list(self.items)
        rng.shuffle(items)
        return items

    def _fields(self) -> dict[str, Any]:
        return {"items": list(self.items)}


PROMPT_KINDS: dict[str, type[Prompt]] = {cls.kind: cls for cls in (ChooseOne, ChooseSubset, Assign, Order)}


def prompt_from_data(data: dict[str, Any]) -> Prompt:
    """Rebuild a prompt received over the wire. Raises ValueError on malformed data."""
    try:
        cls = PROMPT_KINDS[data["kind"]]
    except (KeyError, TypeError):
        raise ValueError(f"unknown prompt: {data!r}") from None
    fields = {k: v for k, v in data.items() if k != "kind"}
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ValueError(f"malformed {cls.kind} prompt: {exc}") from None


__all__: Sequence[str] = [
    "ENUMERATION_LIMIT",
    "Assign",
    "ChooseOne",
    "ChooseSubset",
    "Order",
    "Prompt",
    "freeze",
    "prompt_from_data",
    "thaw",
]
