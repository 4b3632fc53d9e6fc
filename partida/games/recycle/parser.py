"""Reading a RECYCLE description into s-expressions, with positions.

The surface syntax is a Lisp-like list language, so the lark grammar is small; what a list
*means* is checked by the compiler (`compiler.py`), which reports a wrong shape at the list's own
line and column. Both kinds of error are a `RecycleSyntaxError` (a `ValueError`), whose message
says where and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from lark import Lark, Token, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

GRAMMAR = r"""
start: list
list: "(" _item* ")"
_item: list | VAR | INT | SYMBOL
VAR: "'" /[A-Za-z_][A-Za-z0-9_]*/
INT.2: /-?[0-9]+(?![A-Za-z_])/
SYMBOL: /[A-Za-z_=!<>+*\/%-][A-Za-z0-9_=!<>+*\/%.-]*/
COMMENT: /;[^\n]*/
SEP: ","
%import common.WS
%ignore WS
%ignore COMMENT
%ignore SEP
"""

_PARSER = Lark(GRAMMAR, parser="lalr", propagate_positions=True)

TOKEN_NAMES = {
    "LPAR": "'('",
    "RPAR": "')'",
    "VAR": "a quoted name such as 'P",
    "INT": "a number",
    "SYMBOL": "a word",
    "$END": "the end of the description",
}


class RecycleSyntaxError(ValueError):
    """A description that cannot be read: `line` and `column` are 1-based."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column
        self.reason = message


@dataclass(frozen=True)
class Var:
    """A quoted name: `'P`, `'NUMP`."""

    name: str
    line: int = 0
    column: int = 0


@dataclass(frozen=True)
class Sym:
    name: str
    line: int = 0
    column: int = 0


@dataclass(frozen=True)
class Num:
    value: int
    line: int = 0
    column: int = 0


@dataclass(frozen=True)
class SList:
    items: list[SExpr] = field(default_factory=list)
    line: int = 0
    column: int = 0
    end_pos: int = 0
    start_pos: int = 0

    def head(self) -> str | None:
        first = self.items[0] if self.items else None
        return first.name if isinstance(first, Sym) else None


SExpr = Union[Var, Sym, Num, SList]  # noqa: UP007 - used at runtime in isinstance-free code


def _convert(tree: object) -> SExpr:
    if isinstance(tree, Token):
        line, column = tree.line or 0, tree.column or 0
        if tree.type == "VAR":
            return Var(str(tree)[1:], line, column)
        if tree.type == "INT":
            return Num(int(tree), line, column)
        return Sym(str(tree), line, column)
    meta = tree.meta  # type: ignore[attr-defined]
    items = [_convert(child) for child in tree.children]  # type: ignore[attr-defined]
    return SList(items, meta.line, meta.column, meta.end_pos, meta.start_pos)


def _expected(tokens: set[str] | frozenset[str]) -> str:
    names = sorted({TOKEN_NAMES.get(t, t) for t in tokens})
    return " or ".join(names) if names else "something else"


def parse_sexpr(text: str) -> SList:
    """Parse the text of a description into its top-level list."""
    try:
        tree = _PARSER.parse(text)
    except UnexpectedEOF as exc:
        lines = text.rstrip().splitlines() or [""]
        raise RecycleSyntaxError(
            f"the description ends too early: expected {_expected(set(exc.expected))} (a ')' is missing?)",
            len(lines),
            len(lines[-1]) + 1,
        ) from None
    except UnexpectedToken as exc:
        if exc.token.type == "$END":
            lines = text.rstrip().splitlines() or [""]
            raise RecycleSyntaxError(
                f"the description ends too early: expected {_expected(exc.expected)} (a ')' is missing?)",
                len(lines),
                len(lines[-1]) + 1,
            ) from None
        raise RecycleSyntaxError(
            f"unexpected {str(exc.token)!r}: expected {_expected(exc.expected)}", exc.line, exc.column
        ) from None
    except UnexpectedCharacters as exc:
        allowed = _expected(exc.allowed) if exc.allowed else "'(', ')', a word, a number or a quoted name"
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
        raise RecycleSyntaxError(f"unexpected character {char!r}: expected {allowed}", exc.line, exc.column) from None
    except UnexpectedInput as exc:  # pragma: no cover - the three above cover lalr
        raise RecycleSyntaxError(str(exc), exc.line, exc.column) from None
    result = _convert(tree.children[0])
    assert isinstance(result, SList)
    return result
