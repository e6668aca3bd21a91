"""Fixtures for the dashboard's browser tests: a real redis-server (with a
password, so the tests can check it never reaches the page), the dashboard
binary started on a free port, the echomq Python package to fill queues, and
headless Chromium driven by Selenium.

The command that runs the dashboard is DASHBOARD_COMMAND below: one line to
change when the dashboard is reached as `emq dashboard`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

import echomq

ROOT = Path(__file__).resolve().parents[3]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# The one line to change for `emq dashboard`: [str(TARGET / "debug/emq"), "dashboard"].
DASHBOARD_COMMAND = [str(TARGET / "debug" / "emq-dashboard")]

REDIS_PASSWORD = "hunter2-redis-secret"
TOKEN = "s3cret-dashboard-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Redis:
    def __init__(self, *extra: str) -> None:
        """A fresh redis-server; `extra` are more server flags (e.g. an eviction policy)."""
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--requirepass", REDIS_PASSWORD, *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.cli("PING") == "PONG":
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://:{REDIS_PASSWORD}@127.0.0.1:{self.port}/"

    def cli(self, *args: str) -> str:
        """Ask the server with redis-cli: the wire, not the client under test."""
        out = subprocess.run(
            ["redis-cli", "-p", str(self.port), "--no-auth-warning", "-a", REDIS_PASSWORD, *args],
            capture_output=True, text=True)
        return out.stdout.strip()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[Redis]:
    server = Redis()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def client(redis_server: Redis) -> Iterator[echomq.Client]:
    c = echomq.connect(redis_server.url)
    yield c
    c.close()


class Dashboard:
    def __init__(self, url: str, extra: List[str], queues: List[str], refresh_ms: int = 500) -> None:
        self.proc = subprocess.Popen(
            [*DASHBOARD_COMMAND, "--url", url, "--listen", "127.0.0.1:0", "--refresh-ms", str(refresh_ms),
             *extra, *queues],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "http://" not in line:
            self.proc.kill()
            raise RuntimeError("dashboard did not start: " + line + self.proc.stderr.read())
        self.base = line[line.index("http://"):].strip().rstrip("/")
        # It prints its address once subscribed to the queues' events.
        self.subscribed_at = time.monotonic()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


StartDashboard = Callable[..., Dashboard]


@pytest.fixture
def start_dashboard(redis_server: Redis) -> Iterator[StartDashboard]:
    started: List[Dashboard] = []

    def start(*queues: str, extra: Optional[List[str]] = None, refresh_ms: int = 500,
              url: Optional[str] = None) -> Dashboard:
        d = Dashboard(url or redis_server.url, extra or [], list(queues), refresh_ms)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


def make_browser(profile: str) -> webdriver.Chrome:
    """Headless Chromium with a fresh profile in `profile`."""
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    # No network beyond loopback here: these flags keep Chromium from
    # reaching for its update, sync and field-trial servers.
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        options=options,
        service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    driver.set_page_load_timeout(20)
    return driver


@pytest.fixture(scope="session")
def browser() -> Iterator[webdriver.Chrome]:
    profile = tempfile.mkdtemp(prefix="emq-chromium-")
    driver = make_browser(profile)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser: webdriver.Chrome) -> Iterator[webdriver.Chrome]:
    """The shared browser with no session cookie left from another test."""
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
    yield browser
    browser.get("about:blank")
