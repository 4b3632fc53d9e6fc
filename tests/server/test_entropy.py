"""The buffered secrets of partida.server.entropy: the right sizes, never handed out twice, and a
forked child never gets its parent's next bytes."""

import collections
import os

import pytest

from partida.room.core import RoomCore
from partida.room.seed import seed_hash
from partida.room.terms import RoomTerms
from partida.server import entropy


def test_sizes_and_ranges() -> None:
    assert len(entropy.token_bytes(12)) == 12
    assert len(entropy.token_bytes(entropy.CHUNK + 1)) == entropy.CHUNK + 1
    assert len(entropy.token_urlsafe(18)) == 24
    assert len(entropy.token_hex(6)) == 12
    assert all(0 <= entropy.randbits(63) < 2**63 for _ in range(1000))
    assert max(entropy.randbits(63) for _ in range(1000)).bit_length() >= 60
    assert all(0 <= entropy.randbits(5) < 32 for _ in range(1000))


def test_bytes_are_never_repeated_across_refills() -> None:
    tokens = [entropy.token_bytes(16) for _ in range(64 * entropy.CHUNK // 16)]
    assert len(set(tokens)) == len(tokens)
    counts = collections.Counter(b for token in tokens for b in token)
    mean = 64 * entropy.CHUNK / 256  # 1,024 of each byte value, give or take 32
    assert len(counts) == 256 and mean / 2 < min(counts.values()) <= max(counts.values()) < mean * 2


@pytest.mark.processes
def test_a_forked_child_does_not_share_the_buffer() -> None:
    entropy.token_bytes(1)  # the buffer holds unused bytes now
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(write, entropy.token_bytes(32))
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(read, 32) != entropy.token_bytes(32)


def test_a_pool_hands_out_each_item_once_in_order_across_refills() -> None:
    made: list[int] = []

    def make(n: int) -> list[int]:
        start = len(made)
        made.extend(range(start, start + n))
        return made[start:]

    pool = entropy.Pool(make, size=4)
    assert [pool.take() for _ in range(10)] == list(range(10))
    assert len(made) == 12  # three refills of four


@pytest.mark.processes
def test_a_forked_child_does_not_share_a_pool() -> None:
    from partida.server.rooms import codes

    codes.new_seat_token()  # the pool holds unused tokens now
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(write, codes.new_seat_token().encode())
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(read, 24).decode() != codes.new_seat_token()


def test_room_secrets_from_pools_have_their_sizes_and_never_repeat() -> None:
    from partida.server.rooms import codes as rooms

    alphabet = set(rooms.CODE_ALPHABET)
    for length in (rooms.PUBLIC_CODE_LENGTH, rooms.PRIVATE_CODE_LENGTH, 9):
        codes = [rooms.new_room_code(length) for _ in range(1000)]
        assert all(len(code) == length and set(code) <= alphabet for code in codes)
        assert len(set(codes)) > 990 if length == rooms.PUBLIC_CODE_LENGTH else len(set(codes)) == 1000
    tokens = [rooms.new_seat_token() for _ in range(1000)]
    urlsafe = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert len(set(tokens)) == 1000 and all(len(t) == 24 and set(t) <= urlsafe for t in tokens)
    seeds = [RoomCore(RoomTerms(None), *rooms.new_seed()) for _ in range(300)]  # type: ignore[arg-type]
    assert len({room.seed for room in seeds}) == 300
    assert all(0 <= room.seed < 2**63 and room.seed_hash == seed_hash(room.seed) for room in seeds)
    assert max(room.seed for room in seeds).bit_length() >= 60
