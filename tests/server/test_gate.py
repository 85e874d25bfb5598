"""The gate's parts on their own: the throttle's allowance over time, client addresses, Host names."""

from __future__ import annotations

import pytest

from server._gate import Throttle, client_address, host_name


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_throttle_allows_a_burst_then_one_attempt_per_refill() -> None:
    clock = Clock()
    throttle = Throttle(burst=3, refill_s=6.0, clock=clock)
    for _ in range(3):
        assert throttle.retry_after("a") == 0
        throttle.failed("a")
    assert throttle.retry_after("a") == pytest.approx(6.0)
    assert throttle.retry_after("b") == 0  # per address
    clock.now += 3
    assert throttle.retry_after("a") == pytest.approx(3.0)
    clock.now += 3
    assert throttle.retry_after("a") == 0
    throttle.failed("a")
    assert throttle.retry_after("a") == pytest.approx(6.0)  # one more attempt, not a new burst
    clock.now += 3600
    assert throttle.retry_after("a") == 0


def test_the_throttle_remembers_a_bounded_number_of_addresses() -> None:
    throttle = Throttle(burst=1, max_addresses=100, clock=Clock())
    for n in range(1000):
        throttle.failed(f"10.0.{n // 256}.{n % 256}")
    assert len(throttle._buckets) == 100
    assert throttle.retry_after("10.0.3.231") > 0  # the most recent are kept
    assert throttle.retry_after("10.0.0.0") == 0


@pytest.mark.parametrize(
    ("client", "key"),
    [
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("testclient", "testclient"),
    ],
)
def test_client_addresses_are_keyed_by_host_and_ipv6_by_64(client: str, key: str) -> None:
    assert client_address({"client": (client, 5000)}) == key


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("localhost", "localhost"),
        ("LocalHost:8080", "localhost"),
        ("127.0.0.1:80", "127.0.0.1"),
        ("[::1]:8080", "[::1]"),
        ("[::1]", "[::1]"),
        ("evil.example:8080", "evil.example"),
        ("localhost:notaport", "localhost:notaport"),
        (" localhost ", "localhost"),
    ],
)
def test_host_names_lose_their_port(value: str, name: str) -> None:
    assert host_name(value) == name
