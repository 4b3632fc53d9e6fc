"""The server's CPU per received message on the receive path alone: websockets' own asyncio
server against partida's transport (server/transport.py: websockets' sans-I/O protocol driven by
an asyncio protocol of its own), alternating, in one run.

A server in this process, each in turn, whose application only receives each message and answers
it with a fixed two-byte frame written straight to the socket; `--clients` clients in a child
process (so that their CPU is not counted) each send a MessagePack request the size of a move,
masked as a client must, and wait for the answer before sending the next, so that nearly every
read holds one frame, as under the load generator. One JSON line per run: the server, messages,
and this process's CPU microseconds per message (handshakes included, a small part).

    python bench/receive_path.py --clients 10 --messages 20000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from partida.server import transport

REPLY = b"\x82\x00"  # an empty binary frame

CLIENT = r"""
import asyncio, base64, os, sys
import msgpack
from websockets.frames import Frame, Opcode

async def client(port, count):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    await reader.readuntil(b"\r\n\r\n")
    for seq in range(count):
        move = {"type": "act", "room": "ABCDEF", "action": {"cell": seq % 9}, "seq": seq, "id": seq}
        writer.write(Frame(Opcode.BINARY, msgpack.packb(move)).serialize(mask=True))
        await reader.readexactly(2)
    writer.write(Frame(Opcode.CLOSE, b"\x03\xe8").serialize(mask=True))
    await reader.read()
    writer.close()

async def main():
    port, clients, count = map(int, sys.argv[1:])
    await asyncio.gather(*(client(port, count) for _ in range(clients)))

asyncio.run(main())
"""


async def handler(ws: ServerConnection) -> None:
    write = ws.transport.write
    try:
        while True:
            await ws.recv()
            write(REPLY)
    except Exception:
        pass


class Answering:
    """The transport's receiver: each message answered at once."""

    def __init__(self, link: transport.Link) -> None:
        self.write = link.transport.write

    def received(self, message: bytes | str) -> None:
        self.write(REPLY)

    def writable(self) -> None:
        pass

    def rest(self) -> None:
        pass

    def lost(self) -> None:
        pass


SERVERS = ("websockets.asyncio.server", "partida.server.transport")


async def run(name: str, clients: int, messages: int) -> dict[str, object]:
    server: Any
    if name == "partida.server.transport":
        server = await transport.serve(Answering, "127.0.0.1", 0, ping_interval=None)
    else:
        server = await serve(handler, "127.0.0.1", 0, compression=None, ping_interval=None)
    port = next(iter(server.sockets)).getsockname()[1]
    per_client = messages // clients
    cpu, wall = time.process_time(), time.perf_counter()
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT, str(port), str(clients), str(per_client))
    await child.wait()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    server.close()
    await server.wait_closed()
    received = per_client * clients
    return {
        "server": name,
        "messages": received,
        "cpu_us_per_message": round(cpu / received * 1e6, 2),
        "messages_per_s": round(received / wall),
        "client_exit": child.returncode,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for name in SERVERS:  # warm-up, not shown: the first run costs twice the others
        await run(name, args.clients, args.messages // 10)
    for _ in range(args.rounds):
        for name in SERVERS:
            print(json.dumps(await run(name, args.clients, args.messages)), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
