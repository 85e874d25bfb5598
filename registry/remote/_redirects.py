"""Following a broker's redirect to the topic's owner, as pulsar-admin does, and to no one else.

A broker that does not own a topic answers its schema and topic-policy calls with `307 Temporary Redirect` to
the owner (PulsarWebResource.validateTopicOwnership adds `authoritative=true`). pulsar-admin follows it with
the same method, body and credentials (apache/pulsar #15429). httpx neither follows by default nor keeps
`Authorization` across hosts, so the admin client follows itself, re-sending the credentials only to a broker
of the same cluster:

* the same scheme as the URL the user gave (never https → http);
* a host the cluster named: the user's own host; a host `GET /admin/v2/brokers/{cluster}` lists (for each of
  `GET /admin/v2/clusters`), read once from the user's host when a redirect first names another one; or, when
  that listing is refused (it needs a superuser), a host in the user's host's parent DNS domain
  (`broker-2.pulsar.svc` for `broker-0.pulsar.svc`; never for an IP address, a two-label name, or a parent
  that is a public suffix such as `co.uk`).

A redirect anywhere else is refused, naming both hosts, rather than followed without the credentials (which
would end in a 401 that hides the cause). At most `MAX_REDIRECTS` hops; a loop is named in one line.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable, Iterable
from typing import Final

import httpx

from .._errors import StorageError

MAX_REDIRECTS: Final = 5
REDIRECT_STATUS: Final = frozenset({307, 308})  # what keeps the method and body; Pulsar answers 307


class ClusterBrokers:
    """The hosts of the cluster behind one URL, learnt on the first redirect to another host."""

    def __init__(self, url: str, list_brokers: Callable[[], Iterable[str] | None]) -> None:
        parsed = httpx.URL(url)
        self.scheme = parsed.scheme
        self.home = parsed.host.lower()
        self._list_brokers = list_brokers
        self._listed: frozenset[str] | None = None  # None: not read yet
        self._lock = threading.Lock()
        self._asking = threading.local()  # set while this thread lists the brokers (its own redirects)

    @property
    def settled(self) -> bool:
        """`allows` answers without a request (the brokers were listed): an event loop may call it."""
        return self._listed is not None

    def allows(self, target: httpx.URL) -> bool:
        if target.scheme != self.scheme:
            return False
        host = target.host.lower()
        if host == self.home or _same_domain(host, self.home):
            return True
        return host in self._brokers()

    def _brokers(self) -> frozenset[str]:
        """The listed brokers. `list_brokers` answers None when it could not ask (the broker refused for load,
        or did not answer): then nothing is remembered and the next foreign redirect asks again. An empty
        list (a non-superuser's 403) is remembered."""
        with self._lock:
            if self._listed is not None:
                return self._listed
        if getattr(self._asking, "now", False):
            return frozenset()  # the listing itself was redirected to another host: not followed
        self._asking.now = True
        try:
            listed = self._list_brokers()  # not under the lock: the listing is a request of its own
        finally:
            self._asking.now = False
        hosts = frozenset(_host_of(entry) for entry in listed or ())
        if listed is not None:
            with self._lock:
                self._listed = hosts
        return hosts


def _host_of(entry: str) -> str:
    """A broker id as `/brokers/{cluster}` lists it (`host:port`, maybe a URL) → its host, lowercase."""
    text = entry.strip().lower()
    if "://" in text:
        return httpx.URL(text).host.lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def _same_domain(host: str, home: str) -> bool:
    if _is_ip(host) or _is_ip(home):
        return False
    labels = home.split(".")
    parent = labels[1:]
    if len(parent) < 2:  # `example.com`'s parent would be a public suffix
        return False
    if len(parent) == 2 and len(parent[1]) == 2 and parent[0] in _SECOND_LEVEL:
        return False  # `x.co.uk`'s parent is a public suffix too
    return host.endswith("." + ".".join(parent))


# Second-level labels under country codes that registries hand out (co.uk, com.au, ac.jp, ...): never a domain
# of one organisation, so never a parent whose hosts get the credentials.
_SECOND_LEVEL: Final = frozenset({"co", "com", "net", "org", "gov", "ac", "edu", "ne", "or", "go", "gv", "ltd", "plc"})


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def next_hop(response: httpx.Response, hops: list[httpx.URL], brokers: ClusterBrokers) -> httpx.URL:
    """Where a 307/308 `response` sends the request next; `hops` are the URLs asked so far (the first one
    included). Raises, in one line, on a missing Location, a loop, too many hops or a foreign host."""
    method, path = response.request.method, response.request.url.path
    location = response.headers.get("location", "").strip()
    if not location:
        raise StorageError(f"{_where(hops[-1])} answered {response.status_code} without a Location ({method} {path})")
    target = response.request.url.join(location)
    route = " → ".join(_where(url) for url in [*hops, target])
    if any(_same(target, url) for url in hops):
        raise StorageError(f"redirect loop on {method} {path}: {route}")
    if len(hops) > MAX_REDIRECTS:
        raise StorageError(f"more than {MAX_REDIRECTS} redirects on {method} {path}: {route}")
    if not brokers.allows(target):
        raise StorageError(
            f"{_where(hops[-1])} redirected {method} {path} to {target.scheme}://{_where(target)}, which is not a "
            f"broker of this cluster (same scheme, a host /admin/v2/brokers lists or in the same domain); the "
            "credentials are not sent there"
        )
    return target


def _same(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, a.host, a.port, a.path, sorted(a.params.multi_items())) == (
        b.scheme,
        b.host,
        b.port,
        b.path,
        sorted(b.params.multi_items()),
    )


def _where(url: httpx.URL) -> str:
    return f"{url.host}:{url.port}" if url.port else url.host
