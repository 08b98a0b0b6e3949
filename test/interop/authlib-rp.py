"""A relying party on Python's Authlib (Debian's python3-authlib), driven by authlib.test.ts.

As Authlib's docs say for an OpenID Connect client on requests: OAuth2Session with PKCE S256 and a
nonce, fetch_token, the ID token decoded with the provider's JWKS and checked as a CodeIDToken
(iss, aud, exp, nonce, at_hash), userinfo, refresh_token, revoke_token; the logout URL is built
from the discovery document (Authlib has no RP-initiated logout helper).

Protocol with the test, one JSON object a line: it prints {"authorize": url}, reads the callback URL
on stdin, prints {"logout": url, ...results}. AUTHLIB_INSECURE_TRANSPORT=1 allows the http issuer.
"""

import json
import os
import sys

import requests
from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, JsonWebToken
from authlib.oidc.core import CodeIDToken

issuer = os.environ["ISSUER"]
client_id = os.environ["CLIENT_ID"]
redirect_uri = os.environ["REDIRECT_URI"]
meta = requests.get(issuer + "/.well-known/openid-configuration", timeout=30).json()

client = OAuth2Session(
    client_id,
    os.environ["CLIENT_SECRET"],
    scope="openid profile email",
    redirect_uri=redirect_uri,
    code_challenge_method="S256",
    token_endpoint_auth_method="client_secret_basic",
)
verifier = generate_token(48)
nonce = generate_token(20)
uri, state = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
print(json.dumps({"authorize": uri}), flush=True)

callback = sys.stdin.readline().strip()
token = client.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier, state=state)

keys = JsonWebKey.import_key_set(requests.get(meta["jwks_uri"], timeout=30).json())
claims = JsonWebToken(["RS256"]).decode(
    token["id_token"],
    keys,
    claims_cls=CodeIDToken,
    claims_options={"iss": {"essential": True, "value": meta["issuer"]}},
    claims_params={"nonce": nonce, "client_id": client_id, "access_token": token["access_token"]},
)
claims.validate()

userinfo = client.get(meta["userinfo_endpoint"]).json()
refreshed = client.refresh_token(meta["token_endpoint"], refresh_token=token["refresh_token"])
revoked = client.revoke_token(meta["revocation_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token")
try:
    client.refresh_token(meta["token_endpoint"], refresh_token=refreshed["refresh_token"])
    after_revoke = "refreshed"
except OAuthError as err:
    after_revoke = err.error

logout = add_params_to_uri(
    meta["end_session_endpoint"],
    {"id_token_hint": token["id_token"], "post_logout_redirect_uri": os.environ["SIGNED_OUT_URI"], "state": "bye"},
)
print(
    json.dumps(
        {
            "logout": logout,
            "claims": dict(claims),
            "userinfo": userinfo,
            "rotated": refreshed["refresh_token"] != token["refresh_token"],
            "revocation": {"status": revoked.status_code, "content_type": revoked.headers.get("content-type")},
            "after_revoke": after_revoke,
        }
    ),
    flush=True,
)
