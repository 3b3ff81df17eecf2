"""The official Python SDK (`mcp` on PyPI) against an MCP server behind
OAuth: its `OAuthClientProvider` does the whole authorization-code flow
with PKCE (discovery, dynamic registration, the `resource` parameter, the
token exchange, a step-up when the server asks for a wider scope), and this
script plays the person in between (oauth_browser.py: it signs in as
ACCOUNT on the authorization server's login form and allows its consent
form), and hands the SDK the code the browser was sent back with.
Then it creates a note and searches for it, and prints what it saw as one
JSON object. The Rust test (tests/tests/mcp/oauth_e2e.rs) makes the
assertions.

usage: python_oauth.py URL ACCOUNT TITLE
"""

import json
import sys
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth_browser import browse

# No one listens here: the browser stops when it is sent back to it.
REDIRECT_URI = "http://127.0.0.1:9/callback"


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens
        seen_tokens.extend(t for t in (tokens.access_token, tokens.refresh_token) if t)

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


seen_tokens = []
logins = []


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    url, account, title = sys.argv[1], sys.argv[2], sys.argv[3]
    returned = {}

    async def open_in_browser(authorization_url):
        logins.append(authorization_url)
        returned["url"] = await browse(authorization_url, account)

    async def come_back():
        query = parse_qs(urlparse(returned.pop("url")).query)
        if "error" in query:
            raise RuntimeError(f"the authorization server refused: {query}")
        first = lambda name: query.get(name, [None])[0]
        return AuthorizationCodeResult(code=first("code"), state=first("state"), iss=first("iss"))

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="python sdk oauth test",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=Memory(),
        redirect_handler=open_in_browser,
        callback_handler=come_back,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = await client.list_tools()
            created = await client.call_tool("notes.create", {"title": title, "body": "made behind OAuth"})
            found = await client.call_tool("notes.search", {"query": title})
            return {
                "protocol_version": client.protocol_version,
                "tools": [t.name for t in tools.tools],
                "created": wire(created),
                "found": wire(found),
                "logins": logins,
                "tokens": seen_tokens,
            }


if __name__ == "__main__":
    report = anyio.run(main)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
