"""The simulated cluster itself behaves as the Pulsar classes it cites (so a client passing against it meets
what a real cluster does): redirects to the owner, the rate limit, each auth provider, the issuer."""

from __future__ import annotations

import httpx
import pytest

from cluster_sim import ADMIN_TOKEN, BASIC_USER, OAUTH_AUDIENCE, OAUTH_CLIENT, Pacing, trusting

TOPIC = "persistent://acme/orders/order-created"
SCHEMA = "/admin/v2/schemas/acme/orders/order-created/schema"


def test_a_broker_that_does_not_own_a_topic_redirects_to_its_owner(cluster):
    owner = cluster.owner(TOPIC)
    other = (owner + 1) % 3
    with httpx.Client(verify=trusting(cluster.certs.ca)) as http:
        moved = http.get(f"{cluster.urls[other]}{SCHEMA}?x=1")
        assert moved.status_code == 307
        assert moved.headers["location"] == f"{cluster.urls[owner]}{SCHEMA}?x=1&authoritative=true"
        assert http.get(moved.headers["location"]).status_code == 200
        assert http.get(f"{cluster.urls[other]}/admin/v2/tenants").status_code == 200  # not topic-scoped


def test_the_rate_limit_answers_429_with_retry_after_only_when_asked(cluster):
    with httpx.Client(verify=trusting(cluster.certs.ca)) as http:
        try:
            cluster.pacing = Pacing(per_second=0.001, burst=1)
            assert http.get(f"{cluster.urls[0]}/admin/v2/tenants").status_code == 200
            refused = http.get(f"{cluster.urls[0]}/admin/v2/tenants")
            assert refused.status_code == 429 and "retry-after" not in refused.headers
            cluster.pacing = Pacing(per_second=0.001, burst=1, retry_after="3")
            assert http.get(f"{cluster.urls[0]}/admin/v2/tenants").headers["retry-after"] == "3"
        finally:
            cluster.pacing = None


def test_a_certificate_names_only_its_broker_so_another_name_fails_verification(cluster):
    port = cluster.urls[0].rsplit(":", 1)[1]
    with pytest.raises(httpx.ConnectError, match="(?i)hostname|match"):
        httpx.get(f"https://localhost:{port}/admin/v2/tenants", verify=trusting(cluster.certs.ca))
    with pytest.raises(httpx.ConnectError, match="(?i)certificate"):
        httpx.get(f"{cluster.urls[0]}/admin/v2/tenants", verify=trusting(cluster.certs.untrusted_ca))


@pytest.mark.parametrize("auth", ["token", "basic"])
def test_header_auth_modes_refuse_without_and_answer_with_credentials(make_cluster, auth):
    sim = make_cluster(auth)
    url = f"{sim.urls[0]}/admin/v2/tenants"
    with httpx.Client(verify=trusting(sim.certs.ca)) as http:
        assert http.get(url).status_code == 401
        good = {"Authorization": f"Bearer {ADMIN_TOKEN}"} if auth == "token" else None
        answer = http.get(url, headers=good, auth=BASIC_USER if auth == "basic" else None)
        assert answer.status_code == 200


def test_mtls_refuses_a_client_without_a_certificate_at_the_handshake(make_cluster):
    sim = make_cluster("mtls")
    url = f"{sim.urls[0]}/admin/v2/tenants"
    with pytest.raises(httpx.TransportError):
        httpx.get(url, verify=trusting(sim.certs.ca))
    context = trusting(sim.certs.ca)
    context.load_cert_chain(str(sim.certs.client_cert), str(sim.certs.client_key))
    assert httpx.get(url, verify=context).status_code == 200


def test_oauth2_issuer_discovery_then_a_short_lived_token_that_a_revoke_ends(make_cluster):
    sim = make_cluster("oauth2")
    with httpx.Client(verify=trusting(sim.certs.ca)) as http:
        found = http.get(f"{sim.issuer_url}/.well-known/openid-configuration").json()
        form = {"grant_type": "client_credentials", "audience": OAUTH_AUDIENCE}
        client_id, secret = OAUTH_CLIENT
        assert http.post(found["token_endpoint"], data={**form, "client_id": client_id}).status_code == 401
        token = http.post(found["token_endpoint"], data={**form, "client_id": client_id, "client_secret": secret})
        bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}
        url = f"{sim.urls[2]}/admin/v2/tenants"
        assert http.get(url, headers=bearer).status_code == 200
        sim.revoke_tokens()
        assert http.get(url, headers=bearer).status_code == 401
