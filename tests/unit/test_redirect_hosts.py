"""Which redirect targets get the credentials (registry/remote/_redirects.py), and the hop limit."""

from __future__ import annotations

import httpx
import pytest

from registry import StorageError
from registry.remote._redirects import MAX_REDIRECTS, ClusterBrokers, next_hop


def _brokers(url: str, listed: list[str] | None = None) -> ClusterBrokers:
    return ClusterBrokers(url, lambda: listed)


@pytest.mark.parametrize(
    ("home", "target", "listed", "allowed"),
    [
        ("https://broker-0.pulsar.svc:8443", "https://broker-2.pulsar.svc:8443/x", None, True),
        ("https://broker-0.pulsar.svc:8443", "https://evil.example.org:8443/x", None, False),
        ("https://broker-0.pulsar.svc:8443", "http://broker-2.pulsar.svc:8080/x", None, False),  # downgrade
        ("https://pulsar.example:8443", "https://other.example:8443/x", None, False),  # two labels: no domain rule
        ("https://pulsar.co.uk:8443", "https://evil.co.uk:8443/x", None, False),  # a public suffix is no domain
        ("https://b1.acme.co.uk:8443", "https://b2.acme.co.uk:8443/x", None, True),
        ("https://10.0.0.1:8443", "https://10.0.0.2:8443/x", None, False),  # IPs: only what the cluster lists
        ("https://10.0.0.1:8443", "https://10.0.0.2:8443/x", ["10.0.0.1:8080", "10.0.0.2:8080"], True),
        ("https://10.0.0.1:8443", "https://10.0.0.1:9443/x", None, True),  # the user's own host, another port
    ],
)
def test_only_the_clusters_own_brokers_are_followed(home, target, listed, allowed):
    assert _brokers(home, listed).allows(httpx.URL(target)) is allowed


def _redirect(source: str, target: str) -> httpx.Response:
    return httpx.Response(307, headers={"location": target}, request=httpx.Request("GET", source))


def test_more_than_five_hops_are_refused_in_one_line():
    brokers = _brokers("https://b0.pulsar.svc")
    hops = [httpx.URL(f"https://b{n}.pulsar.svc/admin/v2/schemas/t/n/x/schema") for n in range(MAX_REDIRECTS + 1)]
    with pytest.raises(StorageError, match=r"^more than 5 redirects on GET /admin/v2/schemas/t/n/x/schema: b0") as e:
        next_hop(_redirect(str(hops[-1]), "https://b9.pulsar.svc/admin/v2/schemas/t/n/x/schema"), hops, brokers)
    assert "\n" not in str(e.value)
    assert next_hop(_redirect(str(hops[0]), "/elsewhere?authoritative=true"), hops[:1], brokers) == httpx.URL(
        "https://b0.pulsar.svc/elsewhere?authoritative=true"
    )
