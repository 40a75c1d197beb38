"""The gateway's WebSocket only opens for its own page: another site's page, loaded in the same
browser, must not act as a demo user."""

import base64
import http.client
import os
import urllib.parse

from conftest import BASE


def upgrade_status(origin):
    """The status of a WebSocket upgrade request to /ws sent with `origin` (None: no Origin)."""
    url = urllib.parse.urlparse(BASE)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
    headers = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
    }
    if origin is not None:
        headers["Origin"] = origin
    try:
        connection.request("GET", "/ws", headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_own_page_may_open_a_session():
    assert upgrade_status(BASE) == 101


def test_other_origins_are_refused():
    assert upgrade_status("http://evil.example") != 101
    assert upgrade_status(None) != 101
