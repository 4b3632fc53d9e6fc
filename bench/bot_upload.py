"""How long a hosted bot's upload takes through `bot_upload`'s chunks, under the server's
default rate limits (a chunk's bytes are charged to its connection like any frame's).

A server with hosting on (SQLite and bundles in a temporary directory); a person submits a tar
holding one file of random bytes (incompressible: the packed size is the file's) of --mib MiB.
One JSON line: {"bytes", "chunks", "seconds", "mib_per_s", "version"}.

    python bench/bot_upload.py --mib 16
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from partida.client import Client
from partida.server.app import Server, ServerConfig
from partida.server.services.hosted_bots import CHUNK, HostingSettings


def archive(size: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("weights.bin")
        info.size = size
        tar.addfile(info, io.BytesIO(os.urandom(size)))
        script = b"print('hi')\n"
        info = tarfile.TarInfo("bot.py")
        info.size = len(script)
        tar.addfile(info, io.BytesIO(script))
    return buffer.getvalue()


async def run(mib: float, folder: Path) -> dict[str, Any]:
    data = archive(int(mib * (1 << 20)) - 32768)  # room for the headers: the whole at most --mib
    server = Server(
        ServerConfig(port=0, db_url=f"sqlite:///{folder / 'partida.db'}", hosting=HostingSettings(folder / "bundles"))
    )
    await server.start()
    try:
        await server.store.create_user("ada", "ada lovelace")
        client = await Client.connect(server.url, name="ada", password="ada lovelace")
        started = time.perf_counter()
        reply = await client.bot_submit("uploader", ["tictactoe"], "python3 bot.py", data)
        seconds = time.perf_counter() - started
        await client.close()
    finally:
        await server.stop()
    return {
        "bytes": len(data),
        "chunks": -(-len(data) // CHUNK),
        "seconds": round(seconds, 2),
        "mib_per_s": round(len(data) / (1 << 20) / seconds, 2),
        "version": reply["version"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=4.0, help="the upload's size in MiB (at most 16)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="partida-upload-") as folder:
        print(json.dumps(asyncio.run(run(args.mib, Path(folder)))), flush=True)


if __name__ == "__main__":
    main()
