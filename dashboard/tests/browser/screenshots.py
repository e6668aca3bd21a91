"""Take the README's dashboard screenshots from a live, busy deployment.

    bash scripts/dashboard-screenshots.sh            # writes docs/dashboard-*.png

Starts a redis-server and the dashboard, fills a few queues with the echomq
Python package, runs workers (some jobs fail and die) for `--seconds` so the
throughput chart has bars, then photographs the overview and a dead job.
Not part of the test suite: it runs for over a minute on purpose.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import echomq

from conftest import ROOT, Dashboard, Redis, make_browser

QUEUES = ["orders", "emails", "invoices", "webhooks"]


ERRORS = [
    "PaymentGatewayError: upstream 503 from api.payments.example (retry budget spent)",
    "LookupError: no billing address on file for this customer",
    "TimeoutError: SMTP server did not answer within 10 s",
]


def handler(rate_fail: float):
    def handle(job: echomq.Job) -> None:
        time.sleep(random.uniform(0.005, 0.03))
        if random.random() < rate_fail:
            raise RuntimeError(random.choice(ERRORS))
    return handle


def shoot(driver, path: Path) -> None:
    """Save the page at its content's height (no empty band below)."""
    # The content's bottom, not scrollHeight (which is never below the viewport's).
    height = driver.execute_script(
        "return Math.ceil(document.querySelector('main').getBoundingClientRect().bottom + window.scrollY)")
    # The window's own frame takes part of its height: add it back.
    frame = driver.execute_script("return window.outerHeight - window.innerHeight")
    driver.set_window_size(1400, max(480, min(int(height) + int(frame), 1600)))
    time.sleep(0.3)
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=75)
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    args = ap.parse_args()

    redis = Redis()
    client = echomq.connect(redis.url)
    dash = Dashboard(redis.url, [], QUEUES)
    profile = tempfile.mkdtemp(prefix="emq-shots-")
    driver = make_browser(profile)
    workers = []
    try:
        rng = random.Random(7)
        for q, fail in (("orders", 0.04), ("emails", 0.01), ("invoices", 0.12)):
            w = echomq.Worker(client, q, handler(fail), concurrency=4, max_attempts=2,
                              backoff="fixed", backoff_base_ms=200, handle_signals=False)
            t = threading.Thread(target=w.run, daemon=True)
            t.start()
            workers.append((w, t))
        client.pause("webhooks")
        for i in range(140):
            client.enqueue("webhooks", json.dumps({"event": "charge.succeeded", "n": i}))
        deadline = time.time() + args.seconds
        n = 0
        while time.time() < deadline:
            for q in ("orders", "emails", "invoices"):
                for _ in range(rng.randint(2, 9)):
                    n += 1
                    client.enqueue(q, json.dumps({
                        "order_id": 10_000 + n, "customer": {"id": f"cus_{rng.randint(1000, 9999)}", "tier": "pro"},
                        "lines": [{"sku": f"SKU-{rng.randint(100, 999)}", "qty": rng.randint(1, 3)}],
                        "amount_cents": rng.randint(500, 90_000), "currency": "EUR"}))
            for _ in range(rng.randint(0, 2)):
                client.enqueue("emails", json.dumps({"template": "reminder", "n": n}), delay_ms=rng.randint(60_000, 7_200_000))
            time.sleep(0.4)
        for w, _ in workers:
            w.stop()
        for _, t in workers:
            t.join(15)
        for i in range(37):
            client.enqueue("orders", json.dumps({"order_id": 90_000 + i, "sku": "SKU-417", "amount_cents": 1999}))

        driver.get(dash.base + "/")
        WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#queues tbody tr"))
        time.sleep(2.5)
        args.out.mkdir(parents=True, exist_ok=True)
        shoot(driver, args.out / "dashboard-overview.png")

        dead = client.browse("invoices", "dead", True, 1)
        if dead:
            driver.get(f"{dash.base}/#/queue/invoices/job/{dead[0]}")
            WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "payload"))
            time.sleep(0.5)
            shoot(driver, args.out / "dashboard-job.png")
        driver.get(f"{dash.base}/#/queue/invoices")
        WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, 'button[data-state="dead"]'))
        driver.find_element(By.CSS_SELECTOR, 'button[data-state="dead"]').click()
        WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "jobs"))
        time.sleep(0.5)
        shoot(driver, args.out / "dashboard-queue.png")
        print("screenshots in", args.out)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        dash.stop()
        client.close()
        redis.stop()


if __name__ == "__main__":
    main()
