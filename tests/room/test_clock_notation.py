"""The clock notation every flag (and the browser's form, through its own module checked
against the same table) reads: minutes+seconds as Lichess writes them, a unit for short clocks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from partida.room.clock_notation import FORMS, BadClockText, clock_data, clock_text

CASES = json.loads((Path(__file__).parent.parent / "data" / "clock_notation.json").read_text())["cases"]


@pytest.mark.parametrize(("text", "clock", "written"), CASES)
def test_the_notation_reads_and_writes_back_the_same_clock(text: str, clock: Any, written: Any) -> None:
    if clock is None:
        with pytest.raises(BadClockText) as refused:
            clock_data(text)
        assert str(refused.value).endswith(FORMS)  # every refusal shows what is accepted
        return
    data = clock_data(text)
    assert {k: v for k, v in data.items() if k != "timeouts"} == pytest.approx(clock)
    assert clock_text(data) == written
    assert clock_data(written) == data


def test_minutes_are_minutes_and_a_bare_number_is_not_guessed() -> None:
    """`--seek 5+3` meant minutes and `--clock 5+3` seconds: both now read 5 minutes."""
    assert clock_data("5+3")["initial"] == 300
    with pytest.raises(BadClockText, match="'300' is not a clock: write MINUTES"):
        clock_data("300")
    assert clock_text(None) == "no clock"
