"""The wire protocol: message catalogue, codec and error codes. Pure: no sockets, no asyncio.
The guide for people writing bots in other languages is docs/protocol.md."""

from partida.protocol.codec import MAX_MESSAGE_BYTES, Encoding, decode, encode, encode_with_raw, encoding_of
from partida.protocol.errors import ErrorCode, ProtocolError
from partida.protocol.messages import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Request,
    error_message,
    parse_request,
    server_message,
)

__all__ = [
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "Encoding",
    "ErrorCode",
    "ProtocolError",
    "Request",
    "decode",
    "encode",
    "encode_with_raw",
    "encoding_of",
    "error_message",
    "parse_request",
    "server_message",
]
