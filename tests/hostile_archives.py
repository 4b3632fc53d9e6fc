"""Archives a hostile bot author would upload, built in memory for the tests of unpacking
(tests/hosting/) and of the upload requests (tests/server/): each with the error code it must
be refused with."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
import zlib

PACKED_AT = (2026, 11, 29, 0, 0, 0)  # a zip entry's time: fixed, so packing twice gives the same bytes


def tar_of(*members: tuple[tarfile.TarInfo, bytes | None], compression: str = "gz") -> bytes:
    """The same members always make the same bytes (a test compares digests of two packings):
    gzip's header gets no time stamp."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w" if compression in ("gz", "") else f"w:{compression}") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    packed = buffer.getvalue()
    return gzip.compress(packed, mtime=0) if compression == "gz" else packed


def file_entry(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def honest_tar() -> bytes:
    return tar_of(file_entry("bot.py", b"print('hi')\n"), file_entry("lib/util.py", b"X = 1\n"))


def symlink_to_root() -> bytes:
    """The whole submission a link to `/` (what `tar -C mybot` packs when mybot -> /)."""
    info = tarfile.TarInfo(".")
    info.type = tarfile.SYMTYPE
    info.linkname = "/"
    return tar_of((info, None))


def symlink_inside() -> bytes:
    info = tarfile.TarInfo("data")
    info.type = tarfile.SYMTYPE
    info.linkname = "/etc"
    return tar_of(file_entry("bot.py", b"x"), (info, None))


def hard_link_out() -> bytes:
    info = tarfile.TarInfo("passwd")
    info.type = tarfile.LNKTYPE
    info.linkname = "/etc/passwd"
    return tar_of(file_entry("bot.py", b"x"), (info, None))


def device() -> bytes:
    info = tarfile.TarInfo("disk")
    info.type = tarfile.BLKTYPE
    info.devmajor, info.devminor = 8, 0
    return tar_of(file_entry("bot.py", b"x"), (info, None))


def traversal() -> bytes:
    return tar_of(file_entry("bot.py", b"x"), file_entry("../../escaped.py", b"x"))


def absolute() -> bytes:
    return tar_of(file_entry("/tmp/escaped.py", b"x"))


def tar_bomb(unpacked: int = 65 << 20) -> bytes:
    """One file of `unpacked` zero bytes (more than the 64 MiB cap): a few tens of KiB packed."""
    info = tarfile.TarInfo("bomb.bin")
    info.size = unpacked
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=9) as tar:
        tar.addfile(info, _Zeros(unpacked))
    return buffer.getvalue()


def many_files(count: int) -> bytes:
    return tar_of(*(file_entry(f"f{i}.txt", b"") for i in range(count)))


def zip_with_symlink() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", "x")
        link = zipfile.ZipInfo("root")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/")
    return buffer.getvalue()


def honest_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in (("bot.py", "print('hi')\n"), ("pkg/", ""), ("pkg/mod.py", "Y = 2\n")):
            info = zipfile.ZipInfo(name, date_time=PACKED_AT)
            info.external_attr = (0o40775 << 16) | 0x10 if name.endswith("/") else 0o600 << 16  # as writestr(name) sets
            archive.writestr(info, text, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


# (builder, the code it is refused with)
HOSTILE = {
    "symlink_to_root": (symlink_to_root, "upload_link"),
    "symlink_inside": (symlink_inside, "upload_link"),
    "hard_link_out": (hard_link_out, "upload_link"),
    "device": (device, "upload_special_file"),
    "traversal": (traversal, "upload_unsafe_path"),
    "absolute": (absolute, "upload_unsafe_path"),
    "tar_bomb": (tar_bomb, "upload_unpacked_too_large"),
    "too_many_files": (lambda: many_files(2001), "upload_too_many_files"),
    "zip_symlink": (zip_with_symlink, "upload_link"),
    "not_an_archive": (lambda: b"just some bytes, not an archive" * 10, "bad_upload"),
}


def extended_header_bomb(size: int, kind: bytes = tarfile.GNUTYPE_LONGNAME) -> bytes:
    """One gzipped tar header of type `kind` (a GNU long name or long link, or a pax header)
    declaring `size` bytes of zeros: tar reads such a header's bytes whole into memory, so a small
    upload would cost `size` bytes of memory were it read."""
    header = tarfile.TarInfo("././@LongLink")
    header.type = kind
    header.size = size
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [packer.compress(header.tobuf(format=tarfile.GNU_FORMAT)[:512])]
    zeros = bytes(1 << 20)
    for _ in range(size >> 20):
        out.append(packer.compress(zeros))
    out.append(packer.compress(bytes(1024)))
    return b"".join(out) + packer.flush()
