"""OAuth2 client credentials, as Pulsar's AuthenticationOAuth2 with ClientCredentialsFlow does it.

FlowBase finds the token endpoint by issuer discovery (DefaultMetadataResolver reads
`{issuerUrl}/.well-known/openid-configuration`); ClientCredentialsFlow posts `grant_type=client_credentials`
with client_id, client_secret, audience and scope, and AuthenticationOAuth2 keeps the access token until
shortly before `expires_in` runs out. Here a 401 from a broker is also answered by one refresh and one retry
(a token revoked or expired early). The issuer is reached with the same TLS context as the brokers, so the
CA trusted for them is trusted for it too. No secret appears in any error.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Final

import httpx

from .._errors import AuthError, StorageError
from ._connection import OAuth2Auth

REFRESH_MARGIN_S: Final = 60.0  # at most this long before expiry a token is renewed (10% of a shorter life)


class ClientCredentials(httpx.Auth):
    """An httpx auth flow sending `Authorization: Bearer <access token>`, the token fetched and renewed."""

    def __init__(self, settings: OAuth2Auth, http: httpx.Client) -> None:
        self._settings = settings
        self._http = http  # the issuer's client: the brokers' TLS context, no broker credentials
        self._lock = threading.Lock()
        self._token: str | None = None
        self._renew_at = 0.0
        self._endpoint: str | None = None
        self.fetched = 0  # tokens fetched so far (tests)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        used = self._current()
        request.headers["Authorization"] = f"Bearer {used}"
        response = yield request
        if response.status_code == 401:
            request.headers["Authorization"] = f"Bearer {self._current(stale=used)}"
            yield request

    def _current(self, stale: str | None = None) -> str:
        """The cached token, or a new one when it is about to expire or `stale` (the one a broker refused)
        is still cached."""
        with self._lock:
            if self._token is None or time.monotonic() >= self._renew_at or self._token == stale:
                self._token, lifetime = self._fetch()
                self._renew_at = time.monotonic() + max(0.0, lifetime - min(REFRESH_MARGIN_S, lifetime / 10))
            return self._token

    def _fetch(self) -> tuple[str, float]:
        settings = self._settings
        form = {
            "grant_type": "client_credentials",
            "client_id": settings.client_id,
            "client_secret": settings.client_secret,
        }
        if settings.audience:
            form["audience"] = settings.audience
        if settings.scope:
            form["scope"] = settings.scope
        endpoint = self._token_endpoint()
        try:
            response = self._http.post(endpoint, data=form, headers={"Accept": "application/json"})
        except httpx.TransportError as exc:
            raise StorageError(f"cannot reach the OAuth2 token endpoint {endpoint}: {type(exc).__name__}") from None
        body = _json_object(response)
        token = body.get("access_token")
        if response.status_code != 200 or not isinstance(token, str) or not token:
            error = str(body.get("error") or f"HTTP {response.status_code}")
            raise AuthError(
                f"the OAuth2 issuer {settings.issuer_url} refused client {settings.client_id!r}: {error[:80]}"
            )
        self.fetched += 1
        lifetime = body.get("expires_in")
        return token, float(lifetime) if isinstance(lifetime, int | float) else 3600.0

    def _token_endpoint(self) -> str:
        if self._endpoint is None:
            where = f"{self._settings.issuer_url}/.well-known/openid-configuration"
            try:
                response = self._http.get(where)
            except httpx.TransportError as exc:
                raise StorageError(f"cannot reach the OAuth2 issuer {where}: {_cause(exc)}") from None
            endpoint = _json_object(response).get("token_endpoint")
            if response.status_code != 200 or not isinstance(endpoint, str):
                raise StorageError(f"{where} answered HTTP {response.status_code} without a token_endpoint")
            self._endpoint = endpoint
        return self._endpoint


def _json_object(response: httpx.Response) -> dict[str, object]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _cause(exc: Exception) -> str:
    text = str(exc)
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate" in text.lower():
        return "its TLS certificate is not trusted (tlsTrustCertsFilePath)"
    return type(exc).__name__
