"""pygls's protocol, with one change: a request whose parameters do not
fit its method still gets an answer (InvalidParams), as JSON-RPC asks.
pygls logs such a message and drops it, and the client waits for an
answer that never comes."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

_ANSWERED = object()  # a request answered with an error as it was read: nothing left to do


class KnocProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" not in data or "method" not in data or isinstance(data["id"], bool) \
                    or not isinstance(data["id"], (int, str)):
                raise  # a notification, or a response: nobody waits for an answer
            self._send_response(data["id"], error=exc.to_response_error())
            self._server._report_server_error(exc, type(exc))  # the one-line log of a message knoc cannot act on
            return _ANSWERED

    def handle_message(self, message: Any) -> None:
        if message is not _ANSWERED:
            super().handle_message(message)
