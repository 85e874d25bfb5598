"""Delivering notices: one background thread per process POSTs each one, so a write never waits for a receiver
and never fails because of one.

The queue is bounded (a notice that finds it full is dropped, counted and logged, never blocking the write).
Each delivery is retried with backoff on a 5xx answer, a connection error or a timeout, at most `attempts`
times; any other answer (a 4xx, a redirect) fails at once. Its end is recorded as the webhook's last delivery
(`webhooks list`) and counted by outcome (`serve`'s /metrics). A body is signed with the webhook's secret
(`X-Schema-Explorer-Signature: sha256=<hex HMAC-SHA256 of the body>`); reasons and logs name the status or the
kind of connection error and the receiver's host, never the secret (nor the URL's path, which for chat
services is itself a credential). Closing a registry, and the process's exit, wait up to 10 s for what is
queued, so a CLI command's notices are sent, and their outcomes recorded, before it ends.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import hmac
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from ..storage._base import Storage, Transactional
from . import _records
from ._model import WebhookDelivery

SIGNATURE_HEADER = "X-Schema-Explorer-Signature"
EVENT_HEADER = "X-Schema-Explorer-Event"
OUTCOMES = ("delivered", "retried", "failed", "dropped")
EXIT_GRACE_SECONDS = 10.0
_log = logging.getLogger("registry.webhooks")


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One notice for one webhook, made when its write committed."""

    storage: Storage
    webhook_id: int
    url: str = field(repr=False)  # a chat service's URL is a credential
    secret: str | None = field(repr=False)
    event: str
    body: bytes = field(repr=False)

    @property
    def where(self) -> str:
        """The receiver as logs name it: scheme and host, never the path or the query."""
        parts = urlsplit(self.url)
        return f"webhook #{self.webhook_id} ({parts.scheme}://{parts.hostname})"


def signature(secret: str, body: bytes) -> str:
    """The signature header's value: `sha256=` and the hex HMAC-SHA256 of the body with the secret."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


class Deliveries:
    """The process's delivery worker (`DELIVERIES`), started on the first notice."""

    def __init__(
        self,
        *,
        attempts: int = 5,
        backoff: float = 0.5,
        timeout: float = 5.0,
        capacity: int = 1000,
        clock: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    ) -> None:
        self._attempts, self._backoff, self._timeout, self._clock = attempts, backoff, timeout, clock
        self._queue: queue.Queue[Outgoing] = queue.Queue(maxsize=capacity)
        self._thread: threading.Thread | None = None
        self._idle = threading.Condition()
        self._pending = 0
        self._pending_of: dict[int, int] = {}  # by id(storage): each pending item holds its storage, so ids hold
        self.close_grace = EXIT_GRACE_SECONDS
        self._closed: weakref.WeakSet[Storage] = weakref.WeakSet()
        self.counts = dict.fromkeys(OUTCOMES, 0)  # by outcome, since the process started (/metrics reads them)

    def submit(self, item: Outgoing) -> None:
        """Queue `item`; never blocks, never raises."""
        with self._idle:
            try:
                self._queue.put_nowait(item)
            except queue.Full:
                self.counts["dropped"] += 1
                _log.warning("%s: %s not delivered: the delivery queue is full", item.where, item.event)
                return
            self._pending += 1
            self._pending_of[id(item.storage)] = self._pending_of.get(id(item.storage), 0) + 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="webhook-deliveries", daemon=True)
                self._thread.start()

    def closing(self, storage: Storage) -> None:
        """`storage` is about to close: wait (at most `close_grace` seconds) for its notices to be delivered and
        recorded; those still out after that go out, but their outcomes are not recorded in it (a closed SQLite
        storage would open its file again, or make a new one where it was deleted)."""
        with self._idle:
            self._idle.wait_for(lambda: id(storage) not in self._pending_of, self.close_grace)
            with contextlib.suppress(TypeError):  # a storage of one's own may not be weakly referenced
                self._closed.add(storage)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every queued notice has been delivered or has failed (at most `timeout` seconds)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _run(self) -> None:
        # trust_env: a proxy or CA bundle set in the environment (HTTPS_PROXY, SSL_CERT_FILE) is used, as curl would
        with httpx.Client(timeout=self._timeout, follow_redirects=False) as client:
            while True:
                item = self._queue.get()
                try:
                    self._deliver(client, item)
                except Exception as exc:  # a bug here must not stop later deliveries; named by kind only
                    _log.error("%s: delivering %s failed (%s)", item.where, item.event, type(exc).__name__)
                finally:
                    with self._idle:
                        self._pending -= 1
                        left = self._pending_of.pop(id(item.storage)) - 1
                        if left:
                            self._pending_of[id(item.storage)] = left
                        self._idle.notify_all()

    def _deliver(self, client: httpx.Client, item: Outgoing) -> None:
        headers = {"Content-Type": "application/json", "User-Agent": "schema-explorer", EVENT_HEADER: item.event}
        if item.secret is not None:
            headers[SIGNATURE_HEADER] = signature(item.secret, item.body)
        status: int | None = None
        reason = ""
        attempt = 0
        while attempt < self._attempts:
            attempt += 1
            status, reason, again = self._attempt(client, item, headers)
            if not again or attempt == self._attempts:
                break
            self.counts["retried"] += 1
            time.sleep(self._backoff * 2 ** (attempt - 1))
        outcome = "delivered" if not reason else "failed"
        self.counts[outcome] += 1
        if reason:
            _log.warning("%s: %s not delivered after %d attempt(s): %s", item.where, item.event, attempt, reason)
        done = WebhookDelivery(
            at=self._clock(), event=item.event, outcome=outcome, attempts=attempt, status=status, reason=reason
        )
        with self._idle:
            gone = item.storage in self._closed
        if not gone:
            _record(item, done)

    def _attempt(self, client: httpx.Client, item: Outgoing, headers: dict[str, str]) -> tuple[int | None, str, bool]:
        """(the status, why it failed or "", whether to try again)."""
        try:
            response = client.post(item.url, content=item.body, headers=headers)
        except httpx.TimeoutException:
            return None, f"no answer within {self._timeout:g} s", True
        except httpx.HTTPError as exc:  # connection refused or reset, DNS, TLS: named by kind only
            return None, f"could not reach the receiver ({type(exc).__name__})", True
        except Exception as exc:  # httpx.InvalidURL and the like: not worth another try, named by kind only
            return None, f"could not send ({type(exc).__name__})", False
        status = response.status_code
        if 200 <= status < 300:
            return status, "", False
        return status, f"the receiver answered HTTP {status}", status >= 500


def _record(item: Outgoing, done: WebhookDelivery) -> None:
    """Keep the delivery as the webhook's last; a storage closed or failing meanwhile only loses that record."""
    storage = item.storage
    try:
        if isinstance(storage, Transactional):
            with storage.transaction():
                _records.record(storage, item.webhook_id, done)
        else:
            _records.record(storage, item.webhook_id, done)
    except Exception as exc:  # a closed database raises its driver's own errors, not only StorageError
        _log.warning("%s: the delivery's outcome was not recorded: %s", item.where, type(exc).__name__)


DELIVERIES = Deliveries()


@atexit.register
def _drain() -> None:
    with contextlib.suppress(Exception):
        DELIVERIES.wait_idle(EXIT_GRACE_SECONDS)
