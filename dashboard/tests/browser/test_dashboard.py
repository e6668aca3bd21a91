"""The dashboard in a real browser (headless Chromium) against a real
redis-server filled by the echomq Python package: issue #19's "Done when"."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Dict, Optional, Tuple

import pytest
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

import echomq

from conftest import REDIS_PASSWORD, TOKEN, Redis, StartDashboard

WAIT = 10


# The page redraws on live updates, so an element found a moment ago may be
# replaced: every lookup retries on a stale reference.
def waiter(driver: WebDriver, timeout: float = WAIT) -> WebDriverWait:
    return WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException])


def wait_for(driver: WebDriver, css: str, timeout: float = WAIT) -> WebElement:
    return waiter(driver, timeout).until(
        lambda d: d.find_element(By.CSS_SELECTOR, css)
        if d.find_elements(By.CSS_SELECTOR, css) else False)


def text_of(driver: WebDriver, css: str) -> str:
    return str(waiter(driver).until(lambda d: wait_for(d, css).text or " ")).strip()


def click(driver: WebDriver, css: str) -> None:
    def attempt(d: WebDriver) -> bool:
        wait_for(d, css).click()
        return True
    waiter(driver).until(attempt)


def dead_job(client: echomq.Client, queue: str, payload: bytes, error: str) -> str:
    """Enqueue, claim and fail once with max_attempts=1: a dead job with `error`."""
    client.enqueue(queue, payload)
    job = client.claim(queue, lease_ms=30_000)
    assert job is not None
    assert client.retry(queue, job.id, job.token, delay_ms=0, max_attempts=1, error=error) == "dead"
    return job.id


def http(method: str, url: str, headers: Optional[Dict[str, str]] = None) -> Tuple[int, str]:
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read(4096).decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def confirm(driver: WebDriver) -> None:
    click(driver, "#confirm:not([hidden]) #confirm-ok")


def test_overview_shows_the_right_counts(client: echomq.Client, start_dashboard: StartDashboard,
                                         page: WebDriver, redis_server: Redis) -> None:
    q = "ov-orders"
    for i in range(5):
        client.enqueue(q, f"order {i}")
    client.enqueue_in(q, "later", delay_ms=3_600_000)
    client.enqueue_in(q, "later", delay_ms=3_600_000)
    dead_job(client, q, b"bad", "declined")
    assert client.claim(q, lease_ms=600_000) is not None  # one active
    client.enqueue("ov-emails", "hello")
    client.pause("ov-emails")
    expected = client.counts(q)
    assert (expected.pending, expected.active, expected.scheduled, expected.dead) == (4, 1, 2, 1)

    d = start_dashboard(q, "ov-emails")
    page.get(d.base + "/")
    row = f'#queues tr[data-queue="{q}"]'
    wait_for(page, row)
    for field in ("pending", "active", "scheduled", "dead", "completed", "failed"):
        shown = text_of(page, f'{row} td[data-count="{field}"]')
        assert shown == str(getattr(expected, field)), field
    assert text_of(page, '#queues tr[data-queue="ov-emails"] [data-paused]') == "paused"
    # The Redis password never reaches the page, its source or the API.
    assert REDIS_PASSWORD not in page.page_source
    assert text_of(page, "#server") == f"redis://:***@127.0.0.1:{redis_server.port}/"
    status, body = http("GET", d.base + "/api/overview")
    assert status == 200 and REDIS_PASSWORD not in body


def test_job_page_shows_payload_and_last_error(client: echomq.Client, start_dashboard: StartDashboard,
                                               page: WebDriver) -> None:
    q = "jp-billing"
    payload = {"invoice": 4711, "customer": "ada@example.com", "lines": [1, 2]}
    job_id = dead_job(client, q, json.dumps(payload).encode(), "PaymentError: card declined (code 51)")
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}/job/{job_id}")
    shown = text_of(page, "#payload")
    assert json.loads(shown) == payload
    assert '\n  "invoice": 4711' in shown  # pretty-printed
    assert text_of(page, "#last-error") == "PaymentError: card declined (code 51)"
    assert text_of(page, "#job-state") == "dead"


def test_requeue_a_dead_job_from_the_page_moves_it_to_pending_on_the_wire(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver, redis_server: Redis) -> None:
    q = "rq-mail"
    job_id = dead_job(client, q, b"to requeue", "smtp timeout")
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:dead", job_id) == "0"
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}")
    click(page, 'button[data-state="dead"]')
    click(page, f'tr[data-job-id="{job_id}"] button[data-action="requeue"]')
    confirm(page)
    WebDriverWait(page, WAIT).until(lambda p: "Requeued" in p.find_element(By.ID, "toast").text)
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:pending", job_id) == "0"
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:dead", job_id) == ""
    assert redis_server.cli("HGET", f"emq:{{{q}}}:job:{job_id}", "state") == "pending"
    # The dead tab empties without a reload.
    wait_for(page, "#empty")


def test_a_job_completed_by_a_worker_leaves_the_list_without_a_reload(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    q = "live-jobs"
    job_id = client.enqueue(q, "work").id
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}")
    wait_for(page, f'tr[data-job-id="{job_id}"]')
    page.execute_script("window.__noReload = 'still here'")

    done = threading.Event()
    worker = echomq.Worker(client, q, lambda job: done.set(), concurrency=1, handle_signals=False)
    runner = threading.Thread(target=worker.run)
    runner.start()
    try:
        assert done.wait(WAIT)
        WebDriverWait(page, WAIT).until(
            lambda p: not p.find_elements(By.CSS_SELECTOR, f'tr[data-job-id="{job_id}"]'))
    finally:
        worker.stop()
        runner.join(WAIT)
    assert page.execute_script("return window.__noReload") == "still here"
    assert client.counts(q).completed == 1


def test_a_script_payload_is_shown_as_text_and_never_runs(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    q = "xss"
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    dead_id = dead_job(client, q, b"x", "<script>alert(3)</script>")
    job_id = client.enqueue(q, evil).id
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}")
    wait_for(page, f'tr[data-job-id="{job_id}"]')
    page.get(f"{d.base}/#/queue/{q}/job/{job_id}")
    assert text_of(page, "#payload") == evil
    page.get(f"{d.base}/#/queue/{q}/job/{dead_id}")
    assert text_of(page, "#last-error") == "<script>alert(3)</script>"
    # Only the page's own script exists, no <img> was made from the payload,
    # and no dialog opened anywhere along the way.
    assert len(page.find_elements(By.CSS_SELECTOR, "#view script, #view img")) == 0
    with pytest.raises(NoAlertPresentException):
        page.switch_to.alert.text  # noqa: B018 - raises when no dialog is open


def test_without_the_token_nothing_reveals_queue_data(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    q = "secret-queue"
    job_id = client.enqueue(q, "classified").id
    d = start_dashboard(q, extra=["--token", TOKEN])
    for path in ("/", "/api/overview", "/api/events", f"/api/queues/{q}/jobs",
                 f"/api/queues/{q}/jobs/{job_id}", f"/api/queues/{q}/jobs/{job_id}/payload", "/nope"):
        status, body = http("GET", d.base + path)
        assert status == 401, path
        assert q not in body and job_id not in body and "classified" not in body, path
    status, _ = http("POST", f"{d.base}/api/queues/{q}/pause", {"X-EMQ-Dashboard": "1"})
    assert status == 401
    assert client.is_paused(q) is False
    wrong = {"Authorization": "Bearer wrong"}
    assert http("GET", d.base + "/api/overview", wrong)[0] == 401
    status, body = http("GET", d.base + "/api/overview", {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and q in body

    # The browser gets the login page; a wrong token is refused, the right one admitted.
    page.get(d.base + "/")
    wait_for(page, "form.login")
    assert q not in page.page_source
    page.find_element(By.ID, "token").send_keys("wrong")
    page.find_element(By.CSS_SELECTOR, "form.login button").click()
    wait_for(page, ".login-error")
    page.find_element(By.ID, "token").send_keys(TOKEN)
    page.find_element(By.CSS_SELECTOR, "form.login button").click()
    assert text_of(page, f'#queues tr[data-queue="{q}"] td[data-count="pending"]') == "1"


def test_read_only_shows_no_action_and_refuses_posts(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver, redis_server: Redis) -> None:
    q = "ro-queue"
    dead_id = dead_job(client, q, b"stays dead", "nope")
    pending_id = client.enqueue(q, "stays").id
    d = start_dashboard(q, extra=["--read-only"])
    page.get(d.base + "/")
    wait_for(page, f'#queues tr[data-queue="{q}"]')
    assert text_of(page, "#read-only-badge") == "read-only"
    views = [f"#/queue/{q}", f"#/queue/{q}/job/{dead_id}", f"#/queue/{q}/job/{pending_id}"]
    for view in views:
        page.get(d.base + "/" + view)
        wait_for(page, "#jobs, #payload")
        assert page.find_elements(By.CSS_SELECTOR, "[data-action]") == [], view
    page.get(f"{d.base}/#/queue/{q}")
    click(page, 'button[data-state="dead"]')
    wait_for(page, f'tr[data-job-id="{dead_id}"]')
    assert page.find_elements(By.CSS_SELECTOR, "[data-action]") == []

    same_site = {"X-EMQ-Dashboard": "1"}
    for path in (f"/api/queues/{q}/pause", f"/api/queues/{q}/jobs/{dead_id}/requeue",
                 f"/api/queues/{q}/jobs/{pending_id}/remove", f"/api/queues/{q}/dead/requeue"):
        status, body = http("POST", d.base + path, same_site)
        assert status == 403 and "read_only" in body, path
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:dead", dead_id) == "0"
    assert redis_server.cli("HGET", f"emq:{{{q}}}:job:{pending_id}", "state") == "pending"
    assert client.is_paused(q) is False


def test_state_changing_requests_from_another_site_are_refused(
        client: echomq.Client, start_dashboard: StartDashboard, redis_server: Redis) -> None:
    q = "csrf"
    dead_id = dead_job(client, q, b"x", "e")
    d = start_dashboard(q)
    url = f"{d.base}/api/queues/{q}/jobs/{dead_id}/requeue"
    host = d.base.removeprefix("http://")
    for headers in ({},  # a plain form post cannot add the header
                    {"X-EMQ-Dashboard": "1", "Origin": "http://evil.example", "Host": host},
                    {"X-EMQ-Dashboard": "1", "Sec-Fetch-Site": "cross-site"}):
        assert http("POST", url, headers)[0] == 403, headers
    assert http("GET", url)[0] == 405  # actions are POST only
    # A rebound DNS name pointing at loopback is not this dashboard's host.
    assert http("GET", d.base + "/api/overview", {"Host": "evil.example" + host[host.index(":"):]})[0] == 403
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:dead", dead_id) == "0"
    assert http("POST", url, {"X-EMQ-Dashboard": "1"})[0] == 200
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:pending", dead_id) == "0"


def test_a_public_address_without_a_token_refuses_to_start(redis_server: Redis) -> None:
    import subprocess

    from conftest import DASHBOARD_COMMAND

    out = subprocess.run([*DASHBOARD_COMMAND, "--url", redis_server.url, "--listen", "0.0.0.0:0", "q"],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode != 0
    assert "--token" in out.stderr and "--read-only" in out.stderr
    assert REDIS_PASSWORD not in out.stderr + out.stdout


def test_pause_resume_remove_and_requeue_all_from_the_page(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver, redis_server: Redis) -> None:
    q = "ops"
    dead = [dead_job(client, q, f"d{i}".encode(), "boom") for i in range(3)]
    doomed = client.enqueue(q, "remove me").id
    d = start_dashboard(q)
    meta = f"emq:{{{q}}}:meta"

    page.get(d.base + "/")
    click(page, f'#queues tr[data-queue="{q}"] button[data-action="pause"]')
    confirm(page)
    waiter(page).until(lambda p: redis_server.cli("HEXISTS", meta, "paused") == "1")
    assert text_of(page, f'#queues tr[data-queue="{q}"] [data-paused]') == "paused"
    click(page, f'#queues tr[data-queue="{q}"] button[data-action="resume"]')
    confirm(page)
    waiter(page).until(lambda p: redis_server.cli("HEXISTS", meta, "paused") == "0")

    # A cancelled confirmation changes nothing.
    page.get(f"{d.base}/#/queue/{q}/job/{doomed}")
    click(page, 'button[data-action="remove"]')
    click(page, "#confirm-cancel")
    assert redis_server.cli("EXISTS", f"emq:{{{q}}}:job:{doomed}") == "1"
    click(page, 'button[data-action="remove"]')
    confirm(page)
    waiter(page).until(lambda p: "Removed" in p.find_element(By.ID, "toast").text)
    assert redis_server.cli("EXISTS", f"emq:{{{q}}}:job:{doomed}") == "0"
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:pending", doomed) == ""

    page.get(f"{d.base}/#/queue/{q}")
    click(page, 'button[data-state="dead"]')
    click(page, 'button[data-action="requeue-all"]')
    confirm(page)
    waiter(page).until(lambda p: "Requeued 3" in p.find_element(By.ID, "toast").text)
    assert redis_server.cli("ZCARD", f"emq:{{{q}}}:dead") == "0"
    for job_id in dead:
        assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:pending", job_id) == "0"


def test_lists_are_paged_on_the_server_and_filtered_by_time(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    q = "paging"
    ids = [client.enqueue(q, f"job {i}").id for i in range(30)]
    later = client.enqueue_at(q, "later", 4_102_444_800_000).id  # 2100-01-01
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}")
    assert text_of(page, "#range") == "1–25 of 30"
    assert wait_for(page, "#jobs tbody tr").get_attribute("data-job-id") == ids[-1]  # newest first
    click(page, ".pager button:last-child")
    waiter(page).until(lambda p: text_of(p, "#range") == "26–30 of 30")
    shown = [r.get_attribute("data-job-id") for r in page.find_elements(By.CSS_SELECTOR, "#jobs tbody tr")]
    assert shown == list(reversed(ids[:5]))

    status, body = http("GET", f"{d.base}/api/queues/{q}/jobs?state=scheduled&from_ms=4102444800000&to_ms=4102444800001")
    answer = json.loads(body)
    assert status == 200 and answer["total"] == 1
    assert answer["jobs"][0]["id"] == later and answer["jobs"][0]["due_ms"] == 4_102_444_800_000
    status, body = http("GET", f"{d.base}/api/queues/{q}/jobs?state=scheduled&from_ms=0&to_ms=1000")
    assert json.loads(body)["total"] == 0
    assert http("GET", f"{d.base}/api/queues/{q}/jobs?limit=0")[0] == 400
    assert http("GET", f"{d.base}/api/queues/{q}/jobs?limit=201")[0] == 400
    assert http("GET", f"{d.base}/api/queues/{q}/jobs/not-an-id")[0] == 400


def test_sigterm_ends_open_event_streams_and_exits(start_dashboard: StartDashboard) -> None:
    d = start_dashboard("shutdown")
    stream = urllib.request.urlopen(d.base + "/api/events", timeout=5)
    assert stream.readline().startswith(b"event: overview")
    d.proc.terminate()
    assert d.proc.wait(timeout=5) == 0
    stream.close()
