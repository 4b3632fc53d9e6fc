"""A submitted bot's files: packing a directory, and unpacking an upload safely.

An upload is hostile until proven otherwise. It is read entry by entry from the archive's own
headers, and refused, with nothing left on disk, at the first entry that is not a plain file or
directory (a symlink, a hard link, a device, a FIFO), whose path is absolute or climbs out
(`..`), or once the entries would pass the caps on count or unpacked size: a tar bomb is
refused by what its headers declare, before its bytes are written, and the bytes actually
written are counted too (a zip can declare less than it holds). Files are created with
`O_EXCL | O_NOFOLLOW` in a fresh directory, so nothing the archive names can write outside it.

Memory is bounded as well as disk: a compressed tar is inflated as a stream that is refused once
it passes the unpacked cap (plus room for headers), and tar reads it one header at a time, with
an extended header (pax, GNU long name or long link), which tar holds whole in memory, refused
above `MAX_EXTENDED_HEADER` before its bytes are read; GNU sparse members are refused outright.

A bundle is stored under its digest (the sha256 of the upload, packed): the same upload twice
is one directory, and a stored bundle is never written again.
"""

from __future__ import annotations

import bz2
import hashlib
import io
import lzma
import os
import posixpath
import secrets
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

MAX_PACKED = 16 << 20  # bytes of the upload as sent
MAX_UNPACKED = 64 << 20  # bytes of every file together once unpacked
MAX_FILES = 2000  # entries (files and directories)
MAX_PATH = 255  # characters of one entry's path
COPY_CHUNK = 1 << 16
MAX_EXTENDED_HEADER = 64 << 10  # bytes of one pax header or GNU long name / long link
HEADER_ROOM = 4 << 10  # bytes of tar headers and padding allowed per entry beyond the files' own bytes
_EXTENDED = frozenset(
    {tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK}
)
LEFT_OUT = frozenset({".git", ".hg", ".svn", "__pycache__"})  # directories `pack` leaves out


class BundleRefused(Exception):
    """An upload that will not be stored; `code` is the protocol's stable error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Caps:
    packed: int = MAX_PACKED
    unpacked: int = MAX_UNPACKED
    files: int = MAX_FILES


@dataclass(frozen=True)
class Bundle:
    sha256: str
    path: Path
    packed_bytes: int
    unpacked_bytes: int
    files: int


@dataclass(frozen=True)
class _Entry:
    name: str
    kind: str  # file | dir | link | special
    size: int
    executable: bool
    open: object  # a callable returning a binary stream of the file's bytes (files only)


def pack(directory: Path, caps: Caps = Caps()) -> bytes:
    """A directory as a gzipped tar, entries relative to it, but for `LEFT_OUT` (a program never
    reads its version control or its bytecode caches, and a checkout's .git alone can pass the
    caps). Links are packed as links, never followed, so the server refuses them (a directory
    that is a link itself included) rather than this packing the files they lead to."""
    if directory.is_symlink():
        raise BundleRefused("upload_link", f"{directory} is a symbolic link; submit the directory it leads to")
    if not directory.is_dir():
        raise BundleRefused("bad_upload", f"{directory} is not a directory")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for root, dirs, files in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if d not in LEFT_OUT)
            for name in dirs + sorted(files):
                path = Path(root) / name
                tar.add(path, arcname=str(path.relative_to(directory)), recursive=False)
                if buffer.tell() > caps.packed:
                    raise BundleRefused("upload_too_large", f"the packed bundle passes {caps.packed >> 20} MiB")
    data = buffer.getvalue()
    if len(data) > caps.packed:
        raise BundleRefused("upload_too_large", f"the packed bundle passes {caps.packed >> 20} MiB")
    return data


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def unpack(data: bytes | bytearray, root: Path, caps: Caps = Caps(), expect: str | None = None) -> Bundle:
    """Store the upload `data` (a tar, gzipped or not, or a zip) under `root/<sha256>/`, checked
    as the module says; raises `BundleRefused` with nothing written otherwise. `expect`: the
    sha256 its uploader announced, which the bytes must have."""
    if len(data) > caps.packed:
        raise BundleRefused("upload_too_large", f"the upload passes {caps.packed >> 20} MiB packed")
    sha = digest(data)
    if expect is not None and sha != expect:
        raise BundleRefused("bad_upload", "the upload's sha256 differs from the one announced")
    final = root / sha
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".unpacking-{secrets.token_hex(8)}"
    staging.mkdir(mode=0o700)
    try:
        unpacked, files = _extract(data, staging, caps)
        if files == 0:
            raise BundleRefused("bad_upload", "the archive holds no files")
        _seal(staging)
        try:
            os.rename(staging, final)
        except OSError:
            if not final.is_dir():
                raise
            _remove(staging)  # the same upload before (or at the same time): the stored one stays as it was
    except BaseException:
        _remove(staging)
        raise
    return Bundle(sha, final, len(data), unpacked, files)


def _extract(data: bytes, into: Path, caps: Caps) -> tuple[int, int]:
    total = count = 0
    made_dirs: set[str] = set()
    for entry in _entries(data, caps):
        count += 1
        if count > caps.files:
            raise BundleRefused("upload_too_many_files", f"the archive holds more than {caps.files} entries")
        name = _safe_name(entry.name)
        if entry.kind == "link":
            raise BundleRefused("upload_link", f"{entry.name!r} is a link; a submission holds plain files only")
        if entry.kind == "special":
            raise BundleRefused(
                "upload_special_file",
                f"{entry.name!r} is a device, FIFO or socket; a submission holds plain files only",
            )
        if name is None:
            continue  # the archive's own top directory ("." or "./")
        total += entry.size
        if total > caps.unpacked:
            raise BundleRefused("upload_unpacked_too_large", f"the files unpack to more than {caps.unpacked >> 20} MiB")
        _make_parents(into, name, made_dirs)
        if entry.kind == "dir":
            _make_dir(into, name, made_dirs)
            continue
        written = _write(into, name, entry, caps.unpacked - (total - entry.size))
        total += written - entry.size
    return total, count


def _entries(data: bytes, caps: Caps) -> Iterator[_Entry]:
    if zipfile.is_zipfile(io.BytesIO(data)):
        _zip_count(data, caps)  # before zipfile reads the whole central directory into memory
        yield from _zip_entries(data)
        return
    limit = caps.unpacked + (caps.files + 2) * HEADER_ROOM + (1 << 20)
    try:  # a stream, read forwards once: no header is read before the entries before it are done
        tar = tarfile.open(fileobj=_Inflated(data, limit), mode="r|", tarinfo=_GuardedInfo)
    except (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        raise BundleRefused("bad_upload", f"not a tar or zip archive ({exc})") from None
    with tar:
        try:
            for member in tar:  # headers one at a time: a bomb's later entries are never read
                if member.isfile():
                    kind = "file"
                elif member.isdir():
                    kind = "dir"
                elif member.issym() or member.islnk():
                    kind = "link"
                else:
                    kind = "special"
                yield _Entry(
                    member.name,
                    kind,
                    max(member.size, 0),
                    bool(member.mode & 0o111),
                    lambda m=member: tar.extractfile(m),
                )
        except (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            raise BundleRefused("bad_upload", f"a damaged archive ({exc})") from None


class _GuardedInfo(tarfile.TarInfo):
    """tar's header, refused before tar reads an oversized extended header's bytes into memory."""

    @classmethod
    def frombuf(cls, buf, encoding, errors):  # type: ignore[no-untyped-def]
        info = super().frombuf(buf, encoding, errors)
        if info.type in _EXTENDED and info.size > MAX_EXTENDED_HEADER:
            raise BundleRefused(
                "bad_upload", f"an extended tar header of {info.size} bytes (at most {MAX_EXTENDED_HEADER})"
            )
        if info.type == tarfile.GNUTYPE_SPARSE:
            raise BundleRefused("upload_special_file", f"{info.name[:80]!r} is a sparse file")
        return info


class _Inflated(io.RawIOBase):
    """The upload's tar bytes, inflated (gzip, bzip2 or xz, or as they are) as they are read, and
    refused with `upload_unpacked_too_large` once more than `limit` bytes come out."""

    def __init__(self, data: bytes, limit: int) -> None:
        self._chunks = _inflate(data)
        self._buffer = bytearray()
        self._out = 0
        self._limit = limit

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        size = COPY_CHUNK if size is None or size < 0 else size
        while len(self._buffer) < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._out += len(chunk)
            if self._out > self._limit:
                raise BundleRefused("upload_unpacked_too_large", "the archive inflates past the unpacked cap")
            self._buffer += chunk
        out = bytes(self._buffer[:size])
        del self._buffer[:size]
        return out


def _inflate(data: bytes) -> Iterator[bytes]:
    if data.startswith(b"\x1f\x8b"):
        magic, factory = b"\x1f\x8b", lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif data.startswith(b"BZh"):
        magic, factory = b"BZh", bz2.BZ2Decompressor
    elif data.startswith(b"\xfd7zXZ\x00"):
        magic, factory = b"\xfd7zXZ\x00", lzma.LZMADecompressor
    else:
        yield data
        return
    rest = data
    while rest.startswith(magic):  # one stream after another, as gzip and bzip2 allow
        inflater = factory()
        pending = rest
        while not inflater.eof:
            if magic == b"\x1f\x8b":  # zlib keeps what it did not read in unconsumed_tail
                chunk = inflater.decompress(pending, COPY_CHUNK)
                pending = inflater.unconsumed_tail
                stuck = not chunk and not pending
            else:
                stuck = inflater.needs_input and not pending
                chunk = inflater.decompress(pending, COPY_CHUNK)
                pending = b""
            if chunk:
                yield chunk
            elif stuck:
                return  # truncated: tar finds the end missing
        rest = inflater.unused_data


def _zip_count(data: bytes, caps: Caps) -> None:
    """Refuse a zip whose end record, or its central directory walked record by record (zipfile
    reads every record, whatever the count says), holds more than `caps.files` entries: zipfile
    would build an object for each before the first is counted. Damage is left to zipfile."""
    end = len(data) - 22 if data[-22:-18] == b"PK\x05\x06" else data.rfind(b"PK\x05\x06", -(22 + 0xFFFF))
    if end < 0 or end + 22 > len(data):
        return
    count, size = (
        int.from_bytes(data[end + 10 : end + 12], "little"),
        int.from_bytes(data[end + 12 : end + 16], "little"),
    )
    record = end
    locator = end - 20
    if locator >= 0 and data[locator : locator + 4] == b"PK\x06\x07":  # zip64: the counts are in its own end record
        record = int.from_bytes(data[locator + 8 : locator + 16], "little")
        if data[record : record + 4] == b"PK\x06\x06":
            count = int.from_bytes(data[record + 32 : record + 40], "little")
            size = int.from_bytes(data[record + 40 : record + 48], "little")
        else:
            record = end
    if count > caps.files:
        raise BundleRefused("upload_too_many_files", f"the zip declares {count} entries (at most {caps.files})")
    position, seen = max(record - size, 0), 0
    while position < record and data[position : position + 4] == b"PK\x01\x02":
        seen += 1
        if seen > caps.files:
            raise BundleRefused("upload_too_many_files", f"the zip holds more than {caps.files} entries")
        lengths = data[position + 28 : position + 34]
        position += 46 + sum(int.from_bytes(lengths[i : i + 2], "little") for i in (0, 2, 4))


def _zip_entries(data: bytes) -> Iterator[_Entry]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleRefused("bad_upload", f"a damaged zip archive ({exc})") from None
    with archive:
        for info in archive.infolist():
            mode = info.external_attr >> 16  # Unix mode bits, when the zip was made on Unix
            kind_bits = stat.S_IFMT(mode)
            if kind_bits == stat.S_IFLNK:
                kind = "link"
            elif info.is_dir() or kind_bits == stat.S_IFDIR:
                kind = "dir"
            elif kind_bits not in (0, stat.S_IFREG):  # no type bits: a plain file (zipfile's own writestr)
                kind = "special"
            else:
                kind = "file"
            yield _Entry(info.filename, kind, info.file_size, bool(mode & 0o111), lambda i=info: archive.open(i))


def _safe_name(name: str) -> str | None:
    """The entry's path relative to the bundle, or None for the top directory itself; refused
    when absolute, climbing out, or otherwise not a plain relative path."""
    if "\\" in name or "\x00" in name or len(name) > MAX_PATH:
        raise BundleRefused("upload_unsafe_path", f"{name[:80]!r} is not a plain relative path")
    if name.startswith("/"):
        raise BundleRefused("upload_unsafe_path", f"{name[:80]!r} is an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BundleRefused("upload_unsafe_path", f"{name[:80]!r} climbs out of the bundle (..)")
    if not parts:
        return None
    return posixpath.join(*parts)


def _make_parents(into: Path, name: str, made: set[str]) -> None:
    parent = posixpath.dirname(name)
    if parent and parent not in made:
        _make_parents(into, parent, made)
        _make_dir(into, parent, made)


def _make_dir(into: Path, name: str, made: set[str]) -> None:
    if name in made:
        return
    path = into / name
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        if path.is_symlink() or not path.is_dir():
            raise BundleRefused("upload_unsafe_path", f"{name!r} is both a file and a directory") from None
    made.add(name)


def _write(into: Path, name: str, entry: _Entry, room: int) -> int:
    """Write one file, refusing it once it passes `room` bytes; returns the bytes written."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(into / name, flags, 0o755 if entry.executable else 0o644)
    except FileExistsError:
        raise BundleRefused("upload_unsafe_path", f"{name!r} appears twice in the archive") from None
    written = 0
    try:
        source: IO[bytes] | None = entry.open()  # type: ignore[operator]
        if source is None:
            raise BundleRefused("bad_upload", f"{name!r} cannot be read")
        with source, os.fdopen(fd, "wb") as out:
            fd = -1
            while chunk := source.read(COPY_CHUNK):
                written += len(chunk)
                if written > room:
                    raise BundleRefused("upload_unpacked_too_large", "the files unpack to more than the cap allows")
                out.write(chunk)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
        raise BundleRefused("bad_upload", f"{name!r} is damaged ({exc})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    return written


def _seal(directory: Path) -> None:
    """Nothing in a stored bundle is writable: it is run from, never written to."""
    for root, dirs, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            os.chmod(path, os.stat(path).st_mode & 0o555)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(directory, 0o555)


def remove(directory: Path) -> None:
    """Delete a stored bundle (read-only as `_seal` left it)."""
    _remove(directory)


def _remove(directory: Path) -> None:
    if not directory.exists():
        return
    for root, dirs, _files in os.walk(directory):
        os.chmod(root, 0o700)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700)
    shutil.rmtree(directory, ignore_errors=True)
