"""The person at the authorization server, for the OAuth client scripts:
follows an authorization URL like a browser (cookies kept), signs in as an
account on the login form, allows the consent form, and returns the URL
the server then sends the browser to (the client's redirect URI with the
code). The forms are those of tests/clients/oidc_provider.mjs.
"""

from html.parser import HTMLParser
from urllib.parse import urljoin, urlparse

import httpx2


class Form(HTMLParser):
    """The first form of a page: its action and named inputs."""

    def __init__(self):
        super().__init__()
        self.action = None
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = attrs.get("action")
        elif tag == "input" and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""


async def browse(url, account):
    """Returns the URL the authorization server sends the browser back to,
    without following it."""
    origin = urlparse(url).netloc
    async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
        method, data = "GET", None
        for _ in range(20):
            response = await browser.request(method, url, data=data)
            if response.is_redirect:
                target = urljoin(url, response.headers["location"])
                if urlparse(target).netloc != origin:
                    return target
                url, method, data = target, "GET", None
                continue
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}: {response.text}")
            form = Form()
            form.feed(response.text)
            if form.action is None:
                raise RuntimeError(f"{url}: a page without a form: {response.text}")
            if "login" in form.fields:
                form.fields["login"] = account
            url, method, data = urljoin(url, form.action), "POST", form.fields
    raise RuntimeError("still not sent back to the client after 20 steps")
