"""The built site in a real browser: Debian's headless Chromium, driven by Debian's chromium-driver through
Selenium, opens the home page and every guide over HTTP on 127.0.0.1: each renders its title and ``h1``
without a severe console error, and the search answers a query.

Without Chromium the test skips with the install command, unless ``CI`` is set: then it fails (``.ci/run``
installs it). ``CDK_TRITON_DOCS_SCREENSHOTS=<dir>`` saves a screenshot of each page there.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit import docs_site

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
INSTALL = "apt-get install -y chromium chromium-driver (Debian), pip install -r requirements.txt"
SEARCH_WORD = "manifest"


def _missing() -> str | None:
    if docs_site.missing_tools():
        return f"docs tools missing ({', '.join(docs_site.missing_tools())})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium missing"
    if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()):
        return f"no Chromium here ({CHROMIUM}, {DRIVER})"
    return None


def _require_browser() -> None:
    """Skip without Chromium (saying how to install it), except under CI, where that is a failure."""
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: CI must run the browser check; {INSTALL}")
        pytest.skip(f"{missing}: {INSTALL}")


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    _require_browser()
    built = docs_site.site()
    assert built.returncode == 0, built.output[-4000:]
    handler = functools.partial(_QuietHandler, directory=str(built.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (the base class's name)
        pass


@pytest.fixture(scope="module")
def browser(site_url: str) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _pages() -> list[str]:
    """The home page and every guide, as addresses relative to the site."""
    guides = sorted(p.stem for p in (docs_site.ROOT / "docs" / "guides").glob("*.md"))
    return ["", *[f"guides/{g}/" for g in guides]]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p or "home")
def test_the_page_renders_without_console_errors(browser: object, site_url: str, page: str) -> None:
    from selenium.webdriver.common.by import By

    driver: object = browser
    driver.get(site_url + page)  # type: ignore[attr-defined]
    h1 = driver.find_elements(By.CSS_SELECTOR, "article h1")  # type: ignore[attr-defined]
    assert h1 and h1[0].text.strip(), f"{page or 'home'}: no h1 rendered"
    assert driver.title.strip() and "cdk-triton" in driver.title  # type: ignore[attr-defined]
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]  # type: ignore[attr-defined]
    assert not severe, f"{page or 'home'}: console errors {severe}"
    shots = os.environ.get("CDK_TRITON_DOCS_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(shots) / f"{(page or 'home').strip('/').replace('/', '-')}.png"))  # type: ignore[attr-defined]


def test_the_search_answers(browser: object, site_url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver: object = browser
    driver.get(site_url)  # type: ignore[attr-defined]
    # as a reader does: the "/" shortcut opens the search and focuses its box, then type
    driver.find_element(By.TAG_NAME, "body").send_keys("/")  # type: ignore[attr-defined]
    box = WebDriverWait(driver, 10).until(
        ec.visibility_of_element_located((By.CSS_SELECTOR, "input.md-search__input"))
    )
    WebDriverWait(driver, 10).until(lambda d: d.switch_to.active_element == box)
    box.send_keys(SEARCH_WORD)
    results = WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item") or False
    )
    assert results, f"the search found nothing for '{SEARCH_WORD}'"
    assert SEARCH_WORD in " ".join(r.text.lower() for r in results)
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]  # type: ignore[attr-defined]
    assert not severe, severe


def test_without_chromium_it_skips_here_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(globals(), "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium here.*apt-get install -y chromium"):
        _require_browser()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the browser check"):
        _require_browser()
