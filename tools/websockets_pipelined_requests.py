"""Minimal reproduction, for websockets' maintainers, of the failure behind
partida/server/receiving.py's hold on input before the handshake is answered.

A websockets (asyncio) server whose `process_request` answers plain HTTP; a client writes two
GET requests in one segment. The server's parser reads on past the first request as WebSocket
frames before the response is sent; the second request is no frame (reserved bits set), so the
protocol fails the connection and sends EOF; then `send_response` sends EOF again, and
`assert not self.eof_sent` raises inside `send_context`: logged as "unexpected internal error"
with a traceback, once per such connection. Needs only websockets:

    python tools/websockets_pipelined_requests.py 100
"""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback

from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

errors: list[logging.LogRecord] = []


class Catch(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            errors.append(record)


def process_request(connection: ServerConnection, request: Request) -> Response:
    return Response(200, "OK", Headers({"Content-Length": "3", "Connection": "close"}), b"hi\n")


async def handler(connection: ServerConnection) -> None:
    await connection.wait_closed()


async def main(connections: int) -> None:
    logging.getLogger("websockets").addHandler(Catch())
    logging.getLogger("websockets").setLevel(logging.ERROR)
    answered = 0
    async with serve(handler, "127.0.0.1", 0, process_request=process_request) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        request = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
        for _ in range(connections):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request + request)  # HTTP/1.1 pipelining: both in one segment
            answered += (await reader.read()).startswith(b"HTTP/1.1 200")
            writer.close()
        await asyncio.sleep(0.1)
    print(f"{connections} connections, {answered} answered, {len(errors)} tracebacks logged")
    if errors:
        traceback.print_exception(*errors[0].exc_info)  # type: ignore[misc]


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
