"""The hosted bots' requests on a real server: a person submits a bot in chunks, gets versions,
activates, withdraws, reads its logs; everyone else is refused with a stable code, and a hostile
upload is refused with its own and stores nothing."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits
from partida.server.services.hosted_bots import CHUNK, HostingSettings
from tests.hostile_archives import HOSTILE, file_entry, honest_tar, honest_zip, tar_of

pytestmark = pytest.mark.slow  # password hashing for each person


@pytest.fixture
async def hosting(db_url: str, tmp_path: Path) -> AsyncIterator[Server]:
    server = Server(ServerConfig(port=0, db_url=db_url, hosting=HostingSettings(tmp_path / "bundles")))
    await server.start()
    await server.store.create_user("ada", "ada lovelace")
    await server.store.create_user("bo", "bo diddley")
    try:
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def person(server: Server, name: str) -> AsyncIterator[Client]:
    passwords = {"ada": "ada lovelace", "bo": "bo diddley"}
    client = await Client.connect(server.url, name=name, password=passwords[name])
    try:
        yield client
    finally:
        await client.close()


async def refused(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ServerError) as error:
        await call
    return error.value.code


async def test_a_person_submits_versions_activates_and_withdraws(hosting: Server) -> None:
    async with person(hosting, "ada") as ada:
        first = await ada.bot_submit("adabot", ["tictactoe"], "python3 bot.py", honest_tar())
        assert first["version"] == 1 and first["bot"]["status"] == "active"
        assert first["bot"]["owner"] == "ada" and first["bot"]["games"] == ["tictactoe"]
        second = await ada.bot_submit("adabot", ["tictactoe", "othello"], "python3 bot.py --v2", honest_zip())
        assert second["version"] == 2 and second["bot"]["active_version"] == 2
        [bot] = await ada.bot_list()
        assert [v["version"] for v in bot["versions"]] == [1, 2]
        assert bot["games"] == ["tictactoe", "othello"]
        back = await ada.bot_activate("adabot", 1)
        assert back["active_version"] == 1 and back["games"] == ["tictactoe"]
        gone = await ada.bot_withdraw("adabot")
        assert gone["status"] == "withdrawn"
        assert (await ada.bot_activate("adabot", 2))["status"] == "active"
        assert await refused(ada.bot_activate("adabot", 3)) == "no_such_version"
        logs = await ada.bot_logs("adabot")
        assert logs["logs"] == [] and logs["games"] == []
    account = await hosting.store.get_account_by_name("adabot")
    assert account is not None and account.kind == "bot" and account.owner_id is not None
    stored = {p.name for p in (hosting.config.hosting.directory).iterdir()}  # type: ignore[union-attr]
    assert stored == {hashlib.sha256(honest_tar()).hexdigest(), hashlib.sha256(honest_zip()).hexdigest()}


async def test_only_the_owner_manages_a_bot_and_only_people_submit(hosting: Server) -> None:
    async with person(hosting, "ada") as ada:
        await ada.bot_submit("adabot", ["tictactoe"], "python3 bot.py", honest_tar())
    async with person(hosting, "bo") as bo:
        assert await refused(bo.bot_submit("adabot", ["tictactoe"], "python3 bot.py", honest_tar())) == "not_owner"
        assert await refused(bo.bot_activate("adabot", 1)) == "not_owner"
        assert await refused(bo.bot_logs("adabot")) == "not_owner"
        assert await refused(bo.bot_withdraw("adabot")) == "not_owner"
        assert await refused(bo.bot_submit("ada", ["tictactoe"], "python3 bot.py", honest_tar())) == "not_owner"
        assert await refused(bo.bot_logs("nobody")) == "no_such_bot"
        assert await bo.bot_list() == []
    await hosting.store.create_bot("operatorbot")  # made by the operator: nobody's to submit to
    async with person(hosting, "bo") as bo:
        assert await refused(bo.bot_submit("operatorbot", ["tictactoe"], "python3 x", honest_tar())) == "not_owner"
    guest = await Client.connect(hosting.url, name="visitor")
    try:
        assert await refused(guest.bot_submit("g", ["tictactoe"], "python3 bot.py", honest_tar())) == "users_only"
        assert await refused(guest.bot_list()) == "users_only"
    finally:
        await guest.close()
    async with person(hosting, "ada") as ada:
        [bot] = await ada.bot_list()
        assert bot["active_version"] == 1 and len(bot["versions"]) == 1


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_a_hostile_upload_is_refused_with_its_code_and_stores_nothing(hosting: Server, name: str) -> None:
    build, code = HOSTILE[name]
    async with person(hosting, "ada") as ada:
        assert await refused(ada.bot_submit("evil", ["tictactoe"], "python3 bot.py", build())) == code
        assert await ada.bot_list() == []
        assert (await ada.request("ping"))["type"] == "pong"  # the connection goes on
    assert await hosting.store.get_account_by_name("evil") is None
    assert list(hosting.config.hosting.directory.iterdir()) == []  # type: ignore[union-attr]


async def test_oversize_out_of_order_and_forged_uploads_are_refused(hosting: Server) -> None:
    async with person(hosting, "ada") as ada:
        big = {"name": "big", "games": ["tictactoe"], "run": "python3 bot.py", "sha256": "0" * 64}
        assert await refused(ada.request("bot_submit", size=(16 << 20) + 1, **big)) == "upload_too_large"
        data = honest_tar()
        ready = await ada.request(
            "bot_submit",
            name="x",
            games=["tictactoe"],
            run="python3 bot.py",
            size=len(data),
            sha256=hashlib.sha256(b"other").hexdigest(),
        )
        assert ready["chunk"] == CHUNK
        chunk = base64.b64encode(data).decode()
        upload = ready["upload"]
        assert await refused(ada.request("bot_upload", upload=upload, offset=5, data=chunk)) == "bad_upload"
        assert await refused(ada.request("bot_upload", upload="nope", offset=0, data=chunk)) == "no_such_upload"
        assert await refused(ada.request("bot_upload", upload=upload, offset=0, data="!!")) == "bad_upload"
        # every byte arrived, but they are not the ones announced
        assert await refused(ada.request("bot_upload", upload=upload, offset=0, data=chunk)) == "bad_upload"
        assert await refused(ada.request("bot_upload", upload=upload, offset=0, data=chunk)) == "no_such_upload"
        assert await refused(ada.bot_submit("x", ["nosuchgame"], "python3 bot.py", data)) == "unknown_game"
        assert await refused(ada.bot_submit("x", ["tictactoe"], "'unclosed", data)) == "bad_field"
        assert await ada.bot_list() == []


async def test_a_server_without_hosting_refuses_submissions(server: Server) -> None:
    await server.store.create_user("ada", "ada lovelace")
    client = await Client.connect(server.url, name="ada", password="ada lovelace")
    try:
        assert (
            await refused(client.bot_submit("b", ["tictactoe"], "python3 bot.py", honest_tar())) == "hosting_disabled"
        )
        assert await client.bot_list() == []
    finally:
        await client.close()


async def open_upload(client: Client, name: str, data: bytes) -> str:
    ready = await client.request(
        "bot_submit",
        name=name,
        games=["tictactoe"],
        run="python3 bot.py",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    return str(ready["upload"])


def chunk_of(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture
async def few_slots(db_url: str, tmp_path: Path) -> AsyncIterator[Server]:
    limits = Limits(bot_uploads_at_once=2, bot_upload_seconds=1.0)
    server = Server(ServerConfig(port=0, db_url=db_url, hosting=HostingSettings(tmp_path / "bundles"), limits=limits))
    await server.start()
    await server.store.create_user("ada", "ada lovelace")
    await server.store.create_user("bo", "bo diddley")
    try:
        yield server
    finally:
        await server.stop()


async def test_a_person_holds_one_upload_however_many_connections(few_slots: Server) -> None:
    """Ada's uploads on three connections take one of the two slots, not both: each new
    `bot_submit` replaces her unfinished one, and Bo still gets a slot."""
    data = honest_tar()
    async with person(few_slots, "ada") as a1, person(few_slots, "ada") as a2, person(few_slots, "ada") as a3:
        first = await open_upload(a1, "adabot", data)
        second = await open_upload(a2, "adabot", data)
        third = await open_upload(a3, "adabot", data)
        assert await refused(a1.request("bot_upload", upload=first, offset=0, data=chunk_of(data))) == "no_such_upload"
        assert await refused(a2.request("bot_upload", upload=second, offset=0, data=chunk_of(data))) == "no_such_upload"
        async with person(few_slots, "bo") as bo:
            assert (await bo.bot_submit("bobot", ["tictactoe"], "python3 bot.py", data))["version"] == 1
        done = await a3.request("bot_upload", upload=third, offset=0, data=chunk_of(data))
        assert done["type"] == "bot_submitted" and done["version"] == 1


async def test_an_upload_past_its_deadline_is_dropped_and_gives_up_its_slot(few_slots: Server) -> None:
    """An upload that is not stalled still ends `bot_upload_seconds` after its
    `bot_submit`: its slot goes to another person, and its next chunk finds no upload."""
    data = honest_tar()
    await few_slots.store.create_user("cy", "cy twombly")
    async with person(few_slots, "ada") as ada, person(few_slots, "bo") as bo:
        cy = await Client.connect(few_slots.url, name="cy", password="cy twombly")
        try:
            slow = await open_upload(ada, "adabot", data)
            await open_upload(bo, "bobot", data)  # both slots taken
            assert await refused(open_upload(cy, "cybot", data)) == "rate_limited"
            await ada.request("bot_upload", upload=slow, offset=0, data=chunk_of(data[:1]))
            sent = 1
            await asyncio.sleep(1.1)  # not stalled (120 s), but past its second
            await open_upload(cy, "cybot", data)  # Ada's place
            assert (
                await refused(ada.request("bot_upload", upload=slow, offset=sent, data=chunk_of(data[sent:])))
                == "no_such_upload"
            )
            late = await open_upload(ada, "adabot", data)  # replaces nothing; waits a second alone
            await asyncio.sleep(1.1)
            assert (
                await refused(ada.request("bot_upload", upload=late, offset=0, data=chunk_of(data))) == "no_such_upload"
            )
        finally:
            await cy.close()


@pytest.fixture
async def two_kept(db_url: str, tmp_path: Path) -> AsyncIterator[Server]:
    server = Server(ServerConfig(port=0, db_url=db_url, hosting=HostingSettings(tmp_path / "bundles", versions_kept=2)))
    await server.start()
    await server.store.create_user("ada", "ada lovelace")
    try:
        yield server
    finally:
        await server.stop()


async def test_a_bots_old_versions_and_their_bundles_are_pruned(two_kept: Server) -> None:
    """With two versions kept, the third submission deletes the first and its bundle, but not a
    bundle another bot's version still names."""
    uploads = [tar_of(file_entry("bot.py", f"print({i})\n".encode())) for i in range(4)]
    directory = two_kept.config.hosting.directory  # type: ignore[union-attr]
    async with person(two_kept, "ada") as ada:
        await ada.bot_submit("other", ["tictactoe"], "python3 bot.py", uploads[0])
        for data in uploads:
            reply = await ada.bot_submit("adabot", ["tictactoe"], "python3 bot.py", data)
        assert reply["version"] == 4
        assert [v["version"] for v in reply["bot"]["versions"]] == [3, 4]
        [other, bot] = sorted(await ada.bot_list(), key=lambda b: b["name"] != "other")
        assert [v["version"] for v in bot["versions"]] == [3, 4] and len(other["versions"]) == 1
        assert await refused(ada.bot_activate("adabot", 1)) == "no_such_version"
    kept = {hashlib.sha256(uploads[i]).hexdigest() for i in (0, 2, 3)}  # the first is other's
    assert {p.name for p in directory.iterdir()} == kept


async def test_a_submission_is_refused_when_the_disk_is_short(db_url: str, tmp_path: Path) -> None:
    hosting = HostingSettings(tmp_path / "bundles", min_free=1 << 62)
    server = Server(ServerConfig(port=0, db_url=db_url, hosting=hosting))
    await server.start()
    try:
        await server.store.create_user("ada", "ada lovelace")
        async with person(server, "ada") as ada:
            assert (
                await refused(ada.bot_submit("adabot", ["tictactoe"], "python3 bot.py", honest_tar())) == "hosting_full"
            )
            assert await ada.bot_list() == []
    finally:
        await server.stop()
