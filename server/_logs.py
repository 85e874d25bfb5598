"""The server's logs: readable text by default, one JSON object per line with `serve --log-format json`.

Each answered request gets one access line (unless `--no-access-log`), written by the outermost middleware
(server/_observe.py) instead of uvicorn's access log, because only there are the request id, the route
template and the caller known. A line holds: time, level, request id, method, route template (never the path
with its topic, never a query string), status, duration, the caller's token name (never the token) and the
client's address. Error lines (a storage failure, a bug) carry the same request id as the answer's
`X-Request-Id` and the access line. No line ever holds a token or a schema body: the routes log neither, the
error handlers log the exception (whose texts are the core's, which name fields and versions, not payloads).

Values from the request (the client's address, which a trusted proxy's `X-Forwarded-For` sets, the path in
an error line) cannot write a line of their own or pass for another field: in text, every character that is
not printable (newlines, escapes, U+2028...) is written as its escape in every line, and a value that is not
plain (printable ASCII without spaces or quotes) is shown quoted, as JSON; in JSON, a line holding anything
unprintable is written all in ASCII escapes.

In JSON every line is one object with `time` (UTC, ISO 8601 with milliseconds), `level`, `logger`, `message`
and, where they apply, `request_id`, `method`, `route`, `status`, `duration_ms`, `caller`, `client` and
`exception` (the traceback as text). uvicorn's own lines (start, stop, errors) go through the same formatter.
"""

from __future__ import annotations

import json
import logging
import time
from copy import copy
from typing import Any, Final

from uvicorn.logging import DefaultFormatter

LOG_FORMATS: Final = ("text", "json")
ACCESS_LOGGER: Final = "server.access"
_FIELDS: Final = ("request_id", "method", "route", "status", "duration_ms", "caller", "client")


_PLAIN: Final = frozenset(chr(c) for c in range(0x21, 0x7F)) - {'"', "\\"}


def shown(value: str) -> str:
    """A value from the request, for a text line: as it is when plain (printable ASCII, no spaces, no quotes),
    else quoted and escaped as JSON, so it reads as one value whatever it holds."""
    return value if value and _PLAIN.issuperset(value) else json.dumps(value)


def escaped(text: str) -> str:
    """`text` with each character that is not printable written as its Python escape (\\n, \\x1b, \\u2028)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class TextFormatter(DefaultFormatter):
    """uvicorn's text lines, with what is not printable in a message escaped (a traceback keeps its lines)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        if not record.message.isprintable():
            record = copy(record)
            record.message = escaped(record.message)
            record.__dict__.pop("color_message", None)  # uvicorn's coloured variant would bring the raw text back
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (newlines in a message or a traceback are escaped by JSON)."""

    def format(self, record: logging.LogRecord) -> str:
        seconds = record.created
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 1000):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in _FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        text = json.dumps(line, ensure_ascii=False, default=str)
        # JSON escapes the control characters; U+2028, U+0085 and the like still break lines for some readers.
        return text if text.isprintable() else json.dumps(line, default=str)


def log_config(log_format: str) -> dict[str, Any]:
    """uvicorn's `log_config` for `log_format` (text: uvicorn's own formatter; json: `JsonFormatter`), with the
    server's loggers (`server`, `server.access`) on the same handler."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, not {log_format!r}")
    formatter: dict[str, Any] = (
        {"()": f"{__name__}.JsonFormatter"}
        if log_format == "json"
        else {"()": f"{__name__}.TextFormatter", "fmt": "%(levelprefix)s %(message)s", "use_colors": None}
    )
    handler = {"class": "logging.StreamHandler", "formatter": "default", "stream": "ext://sys.stderr"}
    quiet = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"default": formatter},
        "handlers": {"default": handler},
        "loggers": {
            "uvicorn": quiet,
            "uvicorn.error": {"level": "INFO"},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},  # ours replaces it
            "server": quiet,
        },
    }


def startup_line(message: str, log_format: str) -> str:
    """A line `serve` prints before logging is set up, in the chosen format (JSON: one object)."""
    if log_format != "json":
        return message
    record = logging.LogRecord("server", logging.INFO, __file__, 0, message, None, None)
    return JsonFormatter().format(record)


access_log = logging.getLogger(ACCESS_LOGGER)


def log_access(
    *,
    request_id: str,
    method: str,
    route: str,
    status: int,
    seconds: float,
    caller: str,
    client: str,
) -> None:
    """One access line; errors (4xx, 5xx) at WARNING so a filter on level finds them."""
    level = logging.WARNING if status >= 400 else logging.INFO
    if not access_log.isEnabledFor(level):
        return
    duration_ms = round(seconds * 1000.0, 3)
    access_log.log(
        level,
        '%s "%s %s" %d %.1f ms request %s by %s',
        shown(client) if client else "-",
        method,
        route,
        status,
        duration_ms,
        request_id,
        caller,
        extra={
            "request_id": request_id,
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": duration_ms,
            "caller": caller,
            "client": client,
        },
    )
