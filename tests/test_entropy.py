"""The buffered secrets of partida.server.entropy: the right sizes, never handed out twice, and a
forked child never gets its parent's next bytes."""

import collections
import os

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


def test_a_forked_child_does_not_share_the_buffer() -> None:
    entropy.token_bytes(1)  # the buffer holds unused bytes now
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(write, entropy.token_bytes(32))
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(read, 32) != entropy.token_bytes(32)
