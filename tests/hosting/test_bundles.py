"""Unpacking an upload: honest archives land whole and read-only under their digest; every
hostile one is refused with its stable code and leaves nothing behind."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from partida.hosting.bundles import MAX_PACKED, BundleRefused, Caps, digest, pack, unpack
from tests.hostile_archives import HOSTILE, file_entry, honest_tar, honest_zip, many_files, tar_of


def test_an_honest_tar_unpacks_under_its_digest_and_read_only(tmp_path: Path) -> None:
    data = honest_tar()
    bundle = unpack(data, tmp_path)
    assert bundle.path == tmp_path / digest(data)
    assert (bundle.path / "bot.py").read_text() == "print('hi')\n"
    assert (bundle.path / "lib" / "util.py").read_text() == "X = 1\n"
    assert bundle.files == 2 and bundle.unpacked_bytes == len("print('hi')\n") + len("X = 1\n")
    assert not os.access(bundle.path / "bot.py", os.W_OK) or os.geteuid() == 0
    assert (bundle.path / "bot.py").stat().st_mode & 0o222 == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [bundle.sha256]


def test_the_same_upload_twice_is_one_bundle(tmp_path: Path) -> None:
    first = unpack(honest_tar(), tmp_path)
    second = unpack(honest_tar(), tmp_path)
    assert first.path == second.path and len(list(tmp_path.iterdir())) == 1


def test_an_honest_zip_unpacks(tmp_path: Path) -> None:
    bundle = unpack(honest_zip(), tmp_path)
    assert (bundle.path / "pkg" / "mod.py").read_text() == "Y = 2\n"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_with_its_code_and_leaves_nothing(tmp_path: Path, name: str) -> None:
    build, code = HOSTILE[name]
    with pytest.raises(BundleRefused) as refused:
        unpack(build(), tmp_path / "bundles")
    assert refused.value.code == code
    assert list((tmp_path / "bundles").iterdir()) == []
    assert not (tmp_path / "escaped.py").exists()


def test_a_tar_bomb_is_refused_by_its_header_before_a_byte_is_written(tmp_path: Path) -> None:
    """The cap is checked against what the header declares: nothing of the file is written."""
    from tests.hostile_archives import tar_bomb

    written: list[int] = []
    with pytest.raises(BundleRefused) as refused:
        unpack(tar_bomb(3 << 20), tmp_path, Caps(unpacked=1 << 20))
    assert refused.value.code == "upload_unpacked_too_large"
    for root, _, files in os.walk(tmp_path):
        written += [os.path.getsize(os.path.join(root, f)) for f in files]
    assert written == []


def test_an_upload_past_the_packed_cap_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BundleRefused) as refused:
        unpack(b"\0" * (MAX_PACKED + 1), tmp_path)
    assert refused.value.code == "upload_too_large"


def test_the_count_cap_counts_entries(tmp_path: Path) -> None:
    unpack(many_files(10), tmp_path / "a", Caps(files=10))
    with pytest.raises(BundleRefused) as refused:
        unpack(many_files(11), tmp_path / "b", Caps(files=10))
    assert refused.value.code == "upload_too_many_files"


def test_packing_a_directory_keeps_its_files_and_refuses_a_directory_that_is_a_link(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    (bot / "sub").mkdir(parents=True)
    (bot / "bot.py").write_text("print(1)\n")
    (bot / "sub" / "x.txt").write_text("x")
    (bot / ".git" / "objects").mkdir(parents=True)
    (bot / ".git" / "objects" / "ab").write_text("history")
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    bundle = unpack(pack(bot), tmp_path / "bundles")
    assert (bundle.path / "sub" / "x.txt").read_text() == "x"
    assert not (bundle.path / ".git").exists() and not (bundle.path / "__pycache__").exists()
    link = tmp_path / "root-link"
    link.symlink_to("/")
    with pytest.raises(BundleRefused) as refused:
        pack(link)
    assert refused.value.code == "upload_link"


def test_a_link_inside_a_packed_directory_is_packed_as_a_link_and_refused(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("print(1)\n")
    (bot / "etc").symlink_to("/etc")
    with pytest.raises(BundleRefused) as refused:
        unpack(pack(bot), tmp_path / "bundles")
    assert refused.value.code == "upload_link"


BOMB_RSS = """
import resource, sys
from pathlib import Path
from partida.hosting.bundles import BundleRefused, unpack
data = Path(sys.argv[1]).read_bytes()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    unpack(data, Path(sys.argv[2]))
    code = "stored"
except BundleRefused as exc:
    code = exc.code
print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.processes
@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE])
def test_an_extended_header_bomb_is_refused_without_reading_it_into_memory(tmp_path: Path, kind: bytes) -> None:
    """A GNU long name (or long link, or pax header) declaring 64 MiB, in a 64 KiB gzip: tar
    would read the whole header into memory; it is refused first, and the process (its own, as
    the peak of memory is the process's) grows by far less than the header declares."""
    from tests.hostile_archives import extended_header_bomb

    declared = 64 << 20
    upload = tmp_path / "bomb.tgz"
    upload.write_bytes(extended_header_bomb(declared, kind))
    run = subprocess.run(
        [sys.executable, "-c", BOMB_RSS, str(upload), str(tmp_path / "bundles")],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    code, grown_kib = run.stdout.split()
    assert code == "bad_upload"
    assert int(grown_kib) * 1024 < declared // 8
    assert list((tmp_path / "bundles").iterdir()) == []


def test_a_sparse_member_is_refused(tmp_path: Path) -> None:
    info, data = file_entry("bot.py", b"x" * 10)
    info.type = tarfile.GNUTYPE_SPARSE
    with pytest.raises(BundleRefused) as refused:
        unpack(tar_of((info, data)), tmp_path)
    assert refused.value.code == "upload_special_file"


def test_a_bzip2_and_an_xz_tar_unpack(tmp_path: Path) -> None:
    for compression in ("bz2", "xz", ""):
        bundle = unpack(tar_of(file_entry("bot.py", b"print(1)\n"), compression=compression), tmp_path / compression)
        assert (bundle.path / "bot.py").read_text() == "print(1)\n"


def test_an_archive_inflating_past_the_cap_is_refused_while_inflating(tmp_path: Path) -> None:
    """Entries that declare no bytes (directories) but each carry a pax header near its cap: the
    stream, not the entries, passes the unpacked cap (plus its room for headers) and is refused
    as it inflates."""
    import gzip

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for i in range(200):
            info = tarfile.TarInfo(f"d{i}")
            info.type = tarfile.DIRTYPE
            info.pax_headers = {"comment": "x" * (60 << 10)}
            tar.addfile(info)
    with pytest.raises(BundleRefused) as refused:
        unpack(gzip.compress(buffer.getvalue()), tmp_path, Caps(unpacked=0, files=1000))
    assert refused.value.code == "upload_unpacked_too_large"


def zip_of(count: int, declared: int | None = None) -> bytes:
    """A zip of `count` small files whose end record says `declared` entries."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(count):
            archive.writestr(f"f{i}.txt", "x")
    data = bytearray(buffer.getvalue())
    if declared is not None:
        end = data.rfind(b"PK\x05\x06")
        data[end + 8 : end + 12] = declared.to_bytes(2, "little") * 2
    return bytes(data)


def test_a_zip_declaring_more_entries_than_the_cap_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end record's count is read first: zipfile never parses the central directory."""
    import zipfile

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the central directory was read")

    unpack(zip_of(3), tmp_path / "honest", Caps(files=10))
    uploads = (zip_of(3, declared=60_000), zip_of(30, declared=1))  # the count, or the records themselves
    monkeypatch.setattr(zipfile.ZipFile, "__init__", never)
    for data in uploads:
        with pytest.raises(BundleRefused) as refused:
            unpack(data, tmp_path / "bundles", Caps(files=10))
        assert refused.value.code == "upload_too_many_files"
    assert list((tmp_path / "bundles").iterdir()) == []
