"""The server's logs: readable text by default, one JSON object per line with `serve --log-format json`.

Each answered request gets one access line (unless `--no-access-log`), written by the outermost middleware
(server/_observe.py) instead of uvicorn's access log, because only there are the request id, the route
template and the caller known. A line holds: time, level, request id, method, route template (never the path
with its topic, never a query string), status, duration, the caller's token name (never the token) and the
client's address. Error lines (a storage failure, a bug) carry the same request id as the answer's
`X-Request-Id` and the access line. No line ever holds a token or a schema body: the routes log neither, the
error handlers log the exception (whose texts are the core's, which name fields and versions, not payloads).

In JSON every line is one object with `time` (UTC, ISO 8601 with milliseconds), `level`, `logger`, `message`
and, where they apply, `request_id`, `method`, `route`, `status`, `duration_ms`, `caller`, `client` and
`exception` (the traceback as text). uvicorn's own lines (start, stop, errors) go through the same formatter.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Final

LOG_FORMATS: Final = ("text", "json")
ACCESS_LOGGER: Final = "server.access"
_FIELDS: Final = ("request_id", "method", "route", "status", "duration_ms", "caller", "client")


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
        return json.dumps(line, ensure_ascii=False, default=str)


def log_config(log_format: str) -> dict[str, Any]:
    """uvicorn's `log_config` for `log_format` (text: uvicorn's own formatter; json: `JsonFormatter`), with the
    server's loggers (`server`, `server.access`) on the same handler."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, not {log_format!r}")
    formatter: dict[str, Any] = (
        {"()": f"{__name__}.JsonFormatter"}
        if log_format == "json"
        else {"()": "uvicorn.logging.DefaultFormatter", "fmt": "%(levelprefix)s %(message)s", "use_colors": None}
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
        client,
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
