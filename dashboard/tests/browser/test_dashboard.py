"""The dashboard in a real browser (headless Chromium) against a real
redis-server filled by the echomq Python package: issue #19's "Done when"."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from typing import Dict, Iterator, Optional, Tuple

import pytest
from selenium.common.exceptions import (
    NoAlertPresentException, StaleElementReferenceException, TimeoutException)
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

import echomq

from conftest import REDIS_PASSWORD, TOKEN, Dashboard, Redis, StartDashboard

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


BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
ID_EPOCH_MS = 1_704_067_200_000  # docs/PROTOCOL.md: the id's time offset


def id_minted_ago(ago_ms: int) -> str:
    """A JOB id minted `ago_ms` before now (node and sequence bits zero), so a
    test can place dead jobs at known ages."""
    value = (int(time.time() * 1000) - ago_ms - ID_EPOCH_MS) << 22
    body = ""
    for _ in range(11):
        value, digit = divmod(value, 62)
        body = BASE62[digit] + body
    job_id = "JOB" + body
    assert abs(echomq.parse_id(job_id).minted_at_ms - (time.time() * 1000 - ago_ms)) < 5_000
    return job_id


def dead_job_with_id(client: echomq.Client, queue: str, job_id: str, error: str) -> str:
    """`dead_job` under a given id (the queue must hold no other pending job)."""
    client.enqueue(queue, b"old", id=job_id)
    job = client.claim(queue, lease_ms=30_000)
    assert job is not None and job.id == job_id
    assert client.retry(queue, job.id, job.token, delay_ms=0, max_attempts=1, error=error) == "dead"
    return job_id


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
    client.enqueue(q, "later", delay_ms=3_600_000)
    client.enqueue(q, "later", delay_ms=3_600_000)
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
    # The health panel: the doctor's checks of this deployment.
    for check in ("fence", "bundle", "maxmemory-policy"):
        assert text_of(page, f'#health [data-check="{check}"] [data-status]') == "PASS", check
    assert text_of(page, '#health [data-check="persistence"] [data-status]') == "WARN"  # --save "" --appendonly no
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


def test_job_page_shows_progress_logs_and_the_kept_result_live(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    q = "jp-progress"
    job_id = client.enqueue(q, "resize").id
    held = client.claim(q, lease_ms=60_000)
    assert held is not None and held.id == job_id
    held.log("fetched <b>original</b>")
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}/job/{job_id}")
    assert text_of(page, "#job-state") == "active"
    assert text_of(page, "#job-logs") == "fetched <b>original</b>"  # text, not markup
    assert not page.find_elements(By.CSS_SELECTOR, "#job-logs b")
    assert not page.find_elements(By.CSS_SELECTOR, "#progress")

    # The holder reports progress and logs again: the open page follows
    # without a reload (the progress event, or the periodic refresh).
    page.execute_script("window.__noReload = 'still here'")
    held.update_progress(40)
    held.log("resized 1 of 3")
    waiter(page).until(lambda p: p.find_elements(By.CSS_SELECTOR, '#progress[data-value="40"]'))
    waiter(page).until(lambda p: "resized 1 of 3" in p.find_element(By.CSS_SELECTOR, "#job-logs").text)
    assert text_of(page, "#progress") == "40 %"
    held.update_progress({"done": 2, "of": 3})
    waiter(page).until(lambda p: '"done": 2' in p.find_element(By.CSS_SELECTOR, "#progress").text)

    # Completed with keep_result_ms: the row is gone, the result and log stay.
    worker_job = client.enqueue(q, "thumb").id
    client.complete(q, job_id, held.token)
    worker = echomq.Worker(client, q, lambda job: {"width": 640}, keep_result_ms=60_000,
                           handle_signals=False)
    runner = threading.Thread(target=worker.run)
    runner.start()
    try:
        assert json.loads(client.wait_for_result(q, worker_job, 20_000)) == {"width": 640}
    finally:
        worker.stop()
        runner.join(WAIT)
    page.get(f"{d.base}/#/queue/{q}/job/{worker_job}")
    assert text_of(page, "#job-state") == "completed"
    assert json.loads(text_of(page, "#result")) == {"width": 640}
    assert not page.find_elements(By.CSS_SELECTOR, '[data-action="remove"]')
    status, body = http("GET", f"{d.base}/api/queues/{q}/jobs/{worker_job}")
    assert status == 200 and json.loads(body)["result"]["kind"] == "json"


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


@contextmanager
def a_worker_finishes_one_job(client: echomq.Client, queue: str) -> Iterator[None]:
    """Run a worker on `queue` until it has finished one job, then the body,
    then stop the worker."""
    done = threading.Event()
    worker = echomq.Worker(client, queue, lambda job: done.set(), concurrency=1, handle_signals=False)
    runner = threading.Thread(target=worker.run)
    runner.start()
    try:
        assert done.wait(WAIT)
        yield
    finally:
        worker.stop()
        runner.join(WAIT)


def past_the_subscribe_window(d: Dashboard) -> None:
    """Return once the event path is the only thing left to move `d`'s page.
    A client whose enqueue found nobody listening drops that queue's events
    for LISTENER_RECHECK (100 ms, docs/PROTOCOL-DECISIONS.md 12.10), and the
    dashboard re-reads every queue 150 ms after subscribing; a test of the
    event path starts its worker after both."""
    time.sleep(max(0.0, d.subscribed_at + 0.3 - time.monotonic()))


def row_leaves(page: WebDriver, d: Dashboard, job_id: str) -> None:
    """Wait for the job's row to leave the page; if it does not, fail with
    what the server and the page each last saw (a stalled live path is
    otherwise a bare TimeoutException)."""
    try:
        WebDriverWait(page, WAIT).until(
            lambda p: not p.find_elements(By.CSS_SELECTOR, f'tr[data-job-id="{job_id}"]'))
    except TimeoutException:
        server = http("GET", d.base + "/api/overview")[1]
        seen = page.execute_script(
            "return JSON.stringify({overview: state.overview, listLoading: state.listLoading,"
            " live: document.getElementById('live-text').textContent})")
        pytest.fail(f"row {job_id} still shown\nserver: {server}\npage: {seen}")


def test_a_job_completed_by_a_worker_leaves_the_list_without_a_reload(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    q = "live-jobs"
    job_id = client.enqueue(q, "work").id
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}")
    wait_for(page, f'tr[data-job-id="{job_id}"]')
    page.execute_script("window.__noReload = 'still here'")

    with a_worker_finishes_one_job(client, q):
        row_leaves(page, d, job_id)
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
                 f"/api/queues/{q}/jobs/{pending_id}/remove", f"/api/queues/{q}/dead/requeue",
                 f"/api/queues/{q}/dead/purge", f"/api/queues/{q}/dead/purge?older_than=0s",
                 f"/api/queues/{q}/drain", f"/api/queues/{q}/drain?include_scheduled=true"):
        status, body = http("POST", d.base + path, same_site)
        assert status == 403 and "read_only" in body, path
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:dead", dead_id) == "0"
    assert redis_server.cli("HGET", f"emq:{{{q}}}:job:{pending_id}", "state") == "pending"
    assert redis_server.cli("ZSCORE", f"emq:{{{q}}}:pending", pending_id) == "0"
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
    # The page shows it with the next snapshot (a sample already under way
    # when the pause landed may still say running).
    waiter(page).until(lambda p: text_of(p, f'#queues tr[data-queue="{q}"] [data-paused]') == "paused")
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
    later = client.enqueue(q, "later", run_at_ms=4_102_444_800_000).id  # 2100-01-01
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


def test_queue_events_update_the_page_before_any_refresh(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    """With a ten-minute refresh, only the emq:{q}:events path can move the page."""
    q = "events-only"
    job_id = client.enqueue(q, "work").id
    d = start_dashboard(q, refresh_ms=600_000)
    page.get(f"{d.base}/#/queue/{q}")
    wait_for(page, f'tr[data-job-id="{job_id}"]')
    assert text_of(page, 'button[data-state="pending"] .tab-count') == "1"
    page.execute_script("window.__noReload = 'still here'")
    past_the_subscribe_window(d)
    before = json.loads(http("GET", d.base + "/api/overview")[1])
    assert before["live_events"] is True

    with a_worker_finishes_one_job(client, q):
        row_leaves(page, d, job_id)
        waiter(page).until(lambda p: text_of(p, 'button[data-state="pending"] .tab-count') == "0")
    assert page.execute_script("return window.__noReload") == "still here"
    # The row left with the `active` event's sample (which may already read
    # the job completed); the `completed` event's own sample follows within
    # one event gap (200 ms), still without any refresh.
    def completed_shown(_: WebDriver) -> Optional[dict]:
        o = json.loads(http("GET", d.base + "/api/overview")[1])
        q = o["queues"][0]
        return o if q["completed"] == 1 and q["events"] >= before["queues"][0]["events"] + 2 else None
    after = waiter(page).until(completed_shown)  # events: active, completed
    shown = after["queues"][0]
    assert (shown["pending"], shown["active"], shown["completed"]) == (0, 0, 1)
    # No periodic sample has run since the start (refresh is ten minutes):
    # the last queue reading came from an event (or a health reading that
    # kept it).
    assert after["trigger"] in ("event", "health")


def test_a_job_finished_as_the_dashboard_subscribes_is_still_shown_finished(
        client: echomq.Client, start_dashboard: StartDashboard) -> None:
    """The enqueue found nobody listening, so for LISTENER_RECHECK (100 ms)
    this client drops the queue's events without asking again: the claim
    and completion right after the dashboard subscribes publish nothing.
    The dashboard's re-read after that window must still show them, with
    a ten-minute refresh. (When starting the dashboard takes longer than
    the window, the events arrive and this passes the ordinary way.)"""
    q = "finished-while-subscribing"
    job_id = client.enqueue(q, "work").id
    d = start_dashboard(q, refresh_ms=600_000)
    job = client.claim(q, lease_ms=30_000)
    assert job is not None and job.id == job_id
    client.complete(q, job.id, job.token)

    deadline = time.monotonic() + WAIT
    while True:
        queues = json.loads(http("GET", d.base + "/api/overview")[1])["queues"]
        shown = queues[0] if queues else {}  # none before the first sample
        if shown.get("completed") == 1 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert (shown.get("pending"), shown.get("active"), shown.get("completed")) == (0, 0, 1), shown


def test_a_snapshot_that_arrives_while_the_list_loads_is_not_lost(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver) -> None:
    """The page reads its job list one request at a time. An event snapshot
    arriving while a read is in flight (one answered before the job moved)
    must still redraw the list; with a ten-minute refresh nothing else would.
    Before, it was dropped: a fast worker's two events came in one snapshot,
    during the read that the event stream's first snapshot had started."""
    q = "events-during-load"
    job_id = client.enqueue(q, "work").id
    d = start_dashboard(q, refresh_ms=600_000)
    page.get(f"{d.base}/#/queue/{q}")
    wait_for(page, f'tr[data-job-id="{job_id}"]')
    past_the_subscribe_window(d)
    # Answer list reads at once, but hand them to the page 1.5 s later: a
    # read started now sees the job pending and lands after the events.
    page.execute_script("""
        const real = window.fetch;
        window.__slowLists = 0;
        window.fetch = async (path, init) => {
          const r = await real(path, init);
          if (String(path).includes("/jobs?")) {
            window.__slowLists += 1;
            await new Promise((done) => setTimeout(done, 1500));
          }
          return r;
        };
        refreshView();
    """)
    waiter(page).until(lambda p: p.execute_script("return window.__slowLists") == 1)

    with a_worker_finishes_one_job(client, q):
        row_leaves(page, d, job_id)
    # The row left through a second read, after the slow one.
    assert page.execute_script("return window.__slowLists") >= 2


def test_purge_dead_jobs_older_than_an_age_from_the_page(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver, redis_server: Redis) -> None:
    q = "purge"
    old = [dead_job_with_id(client, q, id_minted_ago(h * 3_600_000), "stale") for h in (3, 2)]
    fresh = dead_job(client, q, b"fresh", "recent")
    dead_key = f"emq:{{{q}}}:dead"
    assert redis_server.cli("ZCARD", dead_key) == "3"
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}")
    click(page, 'button[data-state="dead"]')
    wait_for(page, f'tr[data-job-id="{fresh}"]')

    # A cancelled purge changes nothing; an age that is not one is refused.
    click(page, 'button[data-action="purge-dead"]')
    click(page, "#confirm-cancel")
    assert redis_server.cli("ZCARD", dead_key) == "3"
    click(page, 'button[data-action="purge-dead"]')
    age = wait_for(page, "#confirm:not([hidden]) #purge-older-than")
    age.clear()
    age.send_keys("soon")
    confirm(page)
    waiter(page).until(lambda p: "failed" in p.find_element(By.ID, "toast").text)
    assert "older_than" in page.find_element(By.ID, "toast").text
    assert redis_server.cli("ZCARD", dead_key) == "3"

    click(page, 'button[data-action="purge-dead"]')
    age = wait_for(page, "#confirm:not([hidden]) #purge-older-than")
    assert age.get_attribute("value") == "7d"  # the default asks for an age
    age.clear()
    age.send_keys("1h")
    confirm(page)
    waiter(page).until(lambda p: "Deleted 2 dead job(s) of purge older than 1h" in p.find_element(By.ID, "toast").text)
    assert redis_server.cli("ZRANGE", dead_key, "0", "-1") == fresh
    for job_id in old:
        assert redis_server.cli("EXISTS", f"emq:{{{q}}}:job:{job_id}") == "0"
    assert redis_server.cli("HGET", f"emq:{{{q}}}:job:{fresh}", "state") == "dead"
    waiter(page).until(lambda p: text_of(p, "#range") == "1–1 of 1")

    # An empty age purges every dead job; the API answers what it did.
    status, body = http("POST", f"{d.base}/api/queues/{q}/dead/purge?older_than=", {"X-EMQ-Dashboard": "1"})
    assert status == 200 and json.loads(body) == {"queue": q, "deleted": 1, "older_than_ms": None}
    assert redis_server.cli("ZCARD", dead_key) == "0"
    assert redis_server.cli("EXISTS", f"emq:{{{q}}}:job:{fresh}") == "0"
    status, body = http("POST", f"{d.base}/api/queues/{q}/dead/purge?older_than=soon", {"X-EMQ-Dashboard": "1"})
    assert status == 400 and "EMQ_INVALID_ARGUMENT" in body


def test_drain_from_the_page_keeps_active_jobs_and_scheduled_unless_asked(
        client: echomq.Client, start_dashboard: StartDashboard, page: WebDriver, redis_server: Redis) -> None:
    q = "drain"
    active = client.enqueue(q, "running").id
    job = client.claim(q, lease_ms=600_000)
    assert job is not None and job.id == active
    pending = [client.enqueue(q, f"waiting {i}").id for i in range(3)]
    scheduled = [client.enqueue(q, "later", delay_ms=3_600_000).id for _ in range(2)]
    keys = {name: f"emq:{{{q}}}:{name}" for name in ("pending", "schedule", "active")}
    d = start_dashboard(q)
    page.get(f"{d.base}/#/queue/{q}")
    wait_for(page, f'tr[data-job-id="{pending[0]}"]')

    click(page, 'button[data-action="drain"]')
    box = wait_for(page, "#confirm:not([hidden]) #drain-scheduled")
    assert not box.is_selected()
    assert "3 pending" in text_of(page, "#confirm-body") and "1 active" in text_of(page, "#confirm-body")
    confirm(page)
    waiter(page).until(lambda p: "Deleted 3 waiting job(s) of drain (pending)" in p.find_element(By.ID, "toast").text)
    assert redis_server.cli("ZCARD", keys["pending"]) == "0"
    assert redis_server.cli("ZCARD", keys["schedule"]) == "2"
    assert redis_server.cli("ZSCORE", keys["active"], active) != ""
    for job_id in pending:
        assert redis_server.cli("EXISTS", f"emq:{{{q}}}:job:{job_id}") == "0"
    wait_for(page, "#empty")

    click(page, 'button[data-action="drain"]')
    click(page, "#confirm:not([hidden]) #drain-scheduled")
    confirm(page)
    waiter(page).until(lambda p: "Deleted 2 waiting job(s) of drain (pending and scheduled)" in p.find_element(By.ID, "toast").text)
    assert redis_server.cli("ZCARD", keys["schedule"]) == "0"
    for job_id in scheduled:
        assert redis_server.cli("EXISTS", f"emq:{{{q}}}:job:{job_id}") == "0"
    assert redis_server.cli("HGET", f"emq:{{{q}}}:job:{active}", "state") == "active"
    assert client.counts(q).active == 1


def test_the_health_panel_fails_an_evicting_server(start_dashboard: StartDashboard, page: WebDriver) -> None:
    evicting = Redis("--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
    try:
        with echomq.connect(evicting.url) as c:
            c.enqueue("lru", "x")
        d = start_dashboard("lru", url=evicting.url)
        page.get(d.base + "/")
        assert text_of(page, "#health-status") == "FAIL"
        line = '#health [data-check="maxmemory-policy"]'
        assert text_of(page, f"{line} [data-status]") == "FAIL"
        assert "allkeys-lru can silently evict jobs" in text_of(page, f"{line} .check-detail")
        assert text_of(page, '#health [data-check="fence"] [data-status]') == "PASS"
        assert REDIS_PASSWORD not in page.page_source
    finally:
        evicting.stop()
