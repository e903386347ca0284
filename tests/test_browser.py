"""The HTML book in a real browser, offline (`make test-book`).

Every page of the table of contents is served from `_build/html` by a local HTTP server
on 127.0.0.1 and opened in headless Chromium (Debian's `chromium`, installed by `make
browser-deps`; Playwright drives it and never downloads a browser of its own). The
network is cut off: the browser sends every request for another host to a "proxy" that
the test runs on 127.0.0.1, which records it and closes the connection unanswered (host
names and IP addresses alike; the host resolver of the browser resolves nothing but
127.0.0.1 besides), and the page records each such request too. Each page is opened in a
new tab as on a first visit: cookies, localStorage and sessionStorage are emptied before
its scripts run (no stored settings). The tabs share the browser's HTTP cache, as a
reader's browser does from one page of the book to the next; Chromium then compiles
MathJax and the theme's scripts once, not on every page (measured: 154 -> 95 CPU-s). A
request that fails is never cached, so every page still asks the server for what it
lacks. Each page must then

* load MathJax from the book's own `_static/mathjax/` and have every formula rendered
  (no MathJax error, no TeX source such as `\\(` or `$x$` left in the visible text);
* load every image, stylesheet, script and font (no failed request, no HTTP error);
* log no console error and raise no JavaScript exception (there is no allow-list: the
  theme's "invalid theme mode" error, for one, is fixed by `html_context` in _config.yml);
* hold no broken internal link: the target file exists and so does its #fragment;
* show no unresolved cross-reference (Sphinx's `missing` references, `??`, `{ref}`);
* have exactly as many solution dropdowns as its source has solution directives, each
  hidden at first and shown by a click on its toggle button;
* show the code of every verification cell (tagged hide-input or hide-cell) collapsed, one
  click away, and the caption of every figure.

The pages of the API reference (api/*.rst, written by scripts/api_reference.py) also show
a visible signature for every documented name and no reST source left in the text (roles
such as ``:func:``, double backquotes, directives, Google-style headings napoleon did not
turn into sections).

A full-page screenshot of Chapter 2 is saved to `_build/screenshots/` for inspection.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from sphinx_external_toc.parsing import parse_toc_yaml

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# Flags for a throw-away headless browser that talks to nothing but the local server: the
# ones scripts/make_pdf.py prints the book with.
sys.path.insert(0, str(ROOT / "scripts"))
from make_pdf import CHROMIUM_ARGS, descendants_cpu_seconds  # noqa: E402

VIEWPORT = {"width": 1280, "height": 900}
LOCALHOST = "127.0.0.1"
PAGES = list(parse_toc_yaml(ROOT / "_toc.yml"))
# Pages Sphinx writes besides the table of contents: index.html only redirects to the
# root page (tested below); the general index and the search page are Sphinx's own.
GENERATED_PAGES = {"index", "genindex", "search"}
SCREENSHOT_PAGE = "chapters/ch02_ntk"
SCREENSHOT = ROOT / "_build" / "screenshots" / "ch02_ntk.png"

SOLUTION_DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{solution(-start)?\}", re.MULTILINE)
# TeX that MathJax should have turned into formulas: a delimiter \( \) \[ \] or $, or a
# command such as \alpha, left in the text outside code and formulas.
RAW_TEX = re.compile(r"\\[()\[\]]|\\[A-Za-z]+|\$")
# reST that Sphinx should have turned into markup, in the visible text of an API page.
RAW_REST = re.compile(r"(?<![\w`]):[a-z]+(:[a-z]+)?:`|``|\.\. [a-z-]+::|\b(Args|Examples?|Raises|Attributes):(?=\s)")
API_PAGES = [page for page in PAGES if page.startswith("api/")]
UNRESOLVED = re.compile(r"\?\?|\{(ref|numref|eq|doc|cite(:[a-z]+)?|prf:ref|term|download)\}")


def _source(docname: str) -> Path:
    for suffix in (".md", ".ipynb", ".rst"):
        path = ROOT / f"{docname}{suffix}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"_toc.yml lists {docname!r} but no {docname}.md, .ipynb or .rst exists "
                            "(the API pages are written by `make api`)")


def _solution_count(docname: str) -> int:
    return len(SOLUTION_DIRECTIVE.findall(_source(docname).read_text(encoding="utf-8")))


def _collapsed_cell_count(docname: str) -> int:
    source = _source(docname)
    if source.suffix != ".md" or "kernelspec" not in source.read_text(encoding="utf-8")[:600]:
        return 0
    import jupytext

    return sum(1 for cell in jupytext.read(source).cells if cell.cell_type == "code"
               and {"hide-input", "hide-cell"} & set(cell.metadata.get("tags", [])))


def _in_context(pattern: re.Pattern, text: str, width: int = 60, limit: int = 12) -> list[str]:
    """The places where pattern matches text, `width` characters either side of a match;
    matches that fall in the previous place's window are not reported again."""
    places, shown_until = [], -1
    for match in pattern.finditer(text):
        if match.start() < shown_until:
            continue
        shown_until = match.end() + width
        places.append(f"...{text[max(0, match.start() - width):shown_until]}...")
    return places[:limit]


class _Ids(HTMLParser):
    """Collects the anchors of a page: every id attribute and every <a name=...>."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])


@functools.lru_cache(maxsize=None)
def _anchors(page: Path) -> frozenset[str]:
    parser = _Ids()
    parser.feed(page.read_text(encoding="utf-8"))
    return frozenset(parser.ids)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        pass


@pytest.fixture(scope="module")
def site(book):
    """The base URL of `_build/html` served on an ephemeral port of 127.0.0.1."""
    server = ThreadingHTTPServer((LOCALHOST, 0), functools.partial(_QuietHandler, directory=str(book)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://{LOCALHOST}:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


@dataclass
class Blackhole:
    """A "proxy" on 127.0.0.1 that answers nothing: it records the first line of each
    request the browser sends it (``GET http://host/path HTTP/1.1``, or ``CONNECT host:443
    HTTP/1.1`` for https) and closes the connection."""

    port: int
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def blackhole():
    listener = socket.create_server((LOCALHOST, 0))
    hole = Blackhole(listener.getsockname()[1])

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # the listener was closed: the module is done
                return
            with connection:
                connection.settimeout(5)
                try:
                    hole.requests.append(connection.makefile("rb").readline().decode("latin-1").strip())
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield hole
    listener.close()
    thread.join(timeout=5)


# Runs in every document before its own scripts: the storage of a first visit.
EMPTY_STORAGE = "try { localStorage.clear(); sessionStorage.clear(); } catch (error) {}"


@pytest.fixture(scope="module")
def browser(book, book_timings, blackhole, tmp_path_factory):
    """Headless Chromium with a profile of its own (a BrowserContext): each page opens in
    a new tab with empty storage; the tabs share the HTTP cache; every request for another
    host goes to the blackhole proxy."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-deps` (Debian's chromium package)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: run `make venv` (it is in the `test` extra)")
    start, own = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    with sync_playwright() as playwright:
        # (Chromium sends requests for 127.0.0.1 and localhost past any proxy)
        context = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"), executable_path=str(CHROMIUM), headless=True,
            args=[*CHROMIUM_ARGS, f"--proxy-server=http://{LOCALHOST}:{blackhole.port}"],
            viewport=VIEWPORT, service_workers="block")
        context.set_default_timeout(30_000)
        context.add_init_script(EMPTY_STORAGE)
        yield context
        # read before closing: the processes Chromium leaves when it exits are reaped by
        # init, so their time would never reach this process's rusage
        chromium = descendants_cpu_seconds()
        context.close()
    used = resource.getrusage(resource.RUSAGE_SELF)
    checks = used.ru_utime + used.ru_stime - own.ru_utime - own.ru_stime
    book_timings.append(f"browser checks: {time.perf_counter() - start:.1f} s wall, {checks:.1f} s CPU in pytest"
                        + (f", {chromium:.1f} s CPU in Chromium and Playwright's driver" if chromium is not None else ""))


@dataclass
class OpenPage:
    """A page of the book open in Chromium, and what happened while it loaded."""

    docname: str
    page: object  # playwright.sync_api.Page
    facts: dict = field(default_factory=dict)
    console_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)


# Runs in the page once it has loaded: waits for MathJax's first typesetting, the fonts
# and the images, then reports what a reader would see.
COLLECT_FACTS = r"""
async () => {
  const mathjax = window.MathJax;
  if (mathjax && mathjax.startup && mathjax.startup.promise) await mathjax.startup.promise;
  await document.fonts.ready;
  await Promise.all(Array.from(document.images, (img) => img.complete ? null : new Promise((done) => {
    img.addEventListener("load", done); img.addEventListener("error", done);
  })));
  const article = document.querySelector("article.bd-article") || document.body;
  // (.sig: the signatures of the API reference, code whose default values may hold TeX)
  const skip = "pre, code, script, style, textarea, mjx-container, .math, .highlight, .sig";
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.closest(skip)) texts.push(node.textContent);
  }
  const mathElements = Array.from(document.querySelectorAll(".math"));
  return {
    mathjaxScripts: Array.from(document.querySelectorAll("script[src]"), (s) => s.src)
      .filter((src) => /mathjax/i.test(src)),
    mathjaxVersion: mathjax && mathjax.version ? mathjax.version : null,
    mathCount: mathElements.length,
    renderedCount: document.querySelectorAll("mjx-container").length,
    unrendered: mathElements.filter((e) => !e.querySelector("mjx-container"))
      .map((e) => e.textContent.trim().slice(0, 80)),
    mathErrors: Array.from(document.querySelectorAll("mjx-merror"),
      (e) => e.getAttribute("data-mjx-error") || e.textContent.slice(0, 80)),
    images: Array.from(document.images, (img) => ({src: img.src, width: img.naturalWidth})),
    links: Array.from(document.querySelectorAll("a[href]"), (a) => a.href),
    missingReferences: Array.from(document.querySelectorAll(".xref.missing, .problematic, .system-message"),
      (e) => e.textContent.trim().slice(0, 80)),
    text: texts.join(" ").replace(/\s+/g, " "),
  };
}
"""


# Playwright's test of visibility (locator.is_visible), as a JavaScript function: rendered
# (checkVisibility: no display:none above it, not in a closed <details>), visibility
# "visible", and a non-empty box. The checks below ask the page once for all its elements
# instead of once per element: each question is a round trip through Playwright's driver.
VISIBLE = """(element) => {
  if (!element || !element.checkVisibility()) return false;
  if (getComputedStyle(element).visibility !== "visible") return false;
  const box = element.getBoundingClientRect();
  return box.width > 0 && box.height > 0;
}"""


def _ask(page, script: str):
    """Evaluate `script`, a JavaScript expression that may call visible(element), in the page."""
    return page.evaluate(f"() => {{ const visible = {VISIBLE}; return {script}; }}")


def _watched_page(browser, docname: str) -> OpenPage:
    """A new tab of the browser (no cookies; its documents start with empty storage)
    that records its requests to hosts other than 127.0.0.1 (which fail: see `browser`),
    its failed local requests, console errors and uncaught exceptions. Close it with
    `.page.close()`. (Playwright's request interception, `page.route`, would switch the
    HTTP cache off.)"""
    browser.clear_cookies()
    page = browser.new_page()
    state = OpenPage(docname, page)

    def request(request):
        if urlsplit(request.url).hostname != LOCALHOST:
            state.external_requests.append(request.url)

    def console(message):
        if message.type == "error":
            state.console_errors.append(f"console: {message.text} ({message.location.get('url')})")

    def response(response):
        if response.status >= 400:
            state.failed_requests.append(f"HTTP {response.status}: {response.url}")

    def failed(request):
        if urlsplit(request.url).hostname == LOCALHOST:
            state.failed_requests.append(f"{request.failure}: {request.url}")

    page.on("request", request)
    page.on("console", console)
    page.on("pageerror", lambda error: state.console_errors.append(f"exception: {error}"))
    page.on("response", response)
    page.on("requestfailed", failed)
    return state


@pytest.fixture(scope="module", params=PAGES)
def opened(request, browser, site):
    """One page of the table of contents, loaded with the network cut off."""
    state = _watched_page(browser, request.param)
    state.page.goto(f"{site}/{state.docname}.html", wait_until="load")
    state.facts = state.page.evaluate(COLLECT_FACTS)
    if state.docname == SCREENSHOT_PAGE:
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        state.page.screenshot(path=str(SCREENSHOT), full_page=True)
    yield state
    state.page.close()


def test_the_network_is_cut_off(browser, site, blackhole):
    """The harness itself: fetches from another host (by name or by IP address) are
    recorded, reach only the blackhole proxy and fail; a local one works."""
    remote = ["https://example.org/x.js", "http://192.0.2.1/x.js"]  # (192.0.2.0/24: for documentation)
    state = _watched_page(browser, PAGES[0])
    try:
        state.page.goto(f"{site}/{PAGES[0]}.html", wait_until="load")
        outcome = state.page.evaluate("""async (urls) => Promise.all(urls.map(
            (url) => fetch(url).then((response) => response.status, () => "failed")))""", ["objects.inv", *remote])
    finally:
        state.page.close()
    assert outcome == [200, "failed", "failed"], outcome
    assert state.external_requests == remote, state.external_requests
    assert {"CONNECT example.org:443 HTTP/1.1", "GET http://192.0.2.1/x.js HTTP/1.1"} <= set(blackhole.requests), (
        blackhole.requests)


def test_each_page_starts_with_empty_storage(browser, site):
    """The harness itself: what one page stores (localStorage, sessionStorage, a cookie)
    is gone when the next page opens, before its scripts run."""
    stored = "localStorage.getItem('probe'), sessionStorage.getItem('probe'), document.cookie"
    for visit in range(2):
        state = _watched_page(browser, PAGES[0])
        try:
            state.page.goto(f"{site}/{PAGES[0]}.html", wait_until="load")
            seen = state.page.evaluate(f"() => [{stored}]")
            state.page.evaluate("() => { localStorage.setItem('probe', 'x'); sessionStorage.setItem('probe', 'x');"
                                " document.cookie = 'probe=x; max-age=3600'; }")
            kept = state.page.evaluate(f"() => [{stored}]")
        finally:
            state.page.close()
        assert seen == [None, None, ""], f"visit {visit + 1} found stored values: {seen}"
        assert kept == ["x", "x", "probe=x"], f"the page could not store (so the test shows nothing): {kept}"


def test_visible_agrees_with_playwright(browser, site):
    """The harness itself: VISIBLE calls hidden what Playwright's is_visible calls hidden
    (display:none above, a closed <details>, visibility:hidden, an empty box) and visible
    what it calls visible (a plain paragraph, an open <details>)."""
    cases = {
        "plain": "<p id='plain'>text</p>",
        "under-display-none": "<div style='display:none'><p id='under-display-none'>text</p></div>",
        "closed-details": "<details><summary>s</summary><p id='closed-details'>text</p></details>",
        "open-details": "<details open><summary>s</summary><p id='open-details'>text</p></details>",
        "visibility-hidden": "<p id='visibility-hidden' style='visibility:hidden'>text</p>",
        "empty-box": "<p id='empty-box' style='height:0;overflow:hidden;margin:0'>text</p>",
    }
    state = _watched_page(browser, PAGES[0])
    try:
        state.page.goto(f"{site}/{PAGES[0]}.html", wait_until="load")
        state.page.evaluate("(html) => { document.body.innerHTML = html; }", "".join(cases.values()))
        ours = _ask(state.page, f"{list(cases)}.map((id) => visible(document.getElementById(id)))")
        theirs = [state.page.locator(f"#{case}").is_visible() for case in cases]
    finally:
        state.page.close()
    assert theirs == [True, False, False, True, False, False], dict(zip(cases, theirs))
    assert ours == theirs, dict(zip(cases, ours))


def test_every_built_page_is_in_the_browser_run(book):
    built = {
        path.relative_to(book).with_suffix("").as_posix()
        for path in book.rglob("*.html")
        if not path.relative_to(book).parts[0].startswith("_")
    }
    assert built == set(PAGES) | GENERATED_PAGES, (
        f"pages built but not opened: {sorted(built - set(PAGES) - GENERATED_PAGES)}; "
        f"pages in _toc.yml but not built: {sorted(set(PAGES) - built)}"
    )


def test_index_redirects_to_the_root_page(browser, site):
    state = _watched_page(browser, "index")
    try:
        state.page.goto(f"{site}/index.html")
        state.page.wait_for_url(f"{site}/{PAGES[0]}.html")
    finally:
        state.page.close()
    assert not state.external_requests + state.failed_requests, state.external_requests + state.failed_requests


def test_page_loads_offline(opened, site):
    """No request leaves 127.0.0.1, every local request succeeds, no console error."""
    problems = ([f"tried to reach the network: {url}" for url in opened.external_requests]
                + opened.failed_requests + opened.console_errors)
    assert not problems, "\n".join(problems)


def test_math_is_rendered_by_local_mathjax(opened, site):
    facts = opened.facts
    scripts = [url.split("?")[0] for url in facts["mathjaxScripts"]]
    assert set(scripts) <= {f"{site}/_static/mathjax/tex-mml-chtml.js"}, f"MathJax not from the book: {scripts}"
    if facts["mathCount"]:
        assert scripts, "the page has formulas but loads no MathJax"
        assert facts["mathjaxVersion"] and facts["mathjaxVersion"].startswith("3."), facts["mathjaxVersion"]
        assert not facts["unrendered"], f"formulas MathJax did not render: {facts['unrendered'][:10]}"
        assert facts["renderedCount"] >= facts["mathCount"]
    assert not facts["mathErrors"], f"MathJax errors: {facts['mathErrors'][:10]}"
    leftovers = _in_context(RAW_TEX, facts["text"])
    assert not leftovers, "TeX source left in the text (a formula Markdown did not parse):\n" + "\n".join(leftovers)


def test_images_load(opened):
    broken = [image["src"] for image in opened.facts["images"] if image["width"] == 0]
    assert not broken, "images that did not load:\n" + "\n".join(broken)


def test_internal_links_and_references_resolve(opened, book, site):
    broken = []
    for href in sorted(set(opened.facts["links"])):
        url = urlsplit(href)
        if f"{url.scheme}://{url.netloc}" != site:
            continue  # a link to another site (not loaded), mailto: or javascript:
        target = book / unquote(url.path).lstrip("/")
        if url.path.endswith("/"):
            target = target / "index.html"
        if not target.is_file():
            broken.append(f"broken link {href}: no file {target.relative_to(book)}")
        elif url.fragment and target.suffix == ".html" and unquote(url.fragment) not in _anchors(target):
            broken.append(f"broken link {href}: no id {unquote(url.fragment)!r} in {target.relative_to(book)}")
    broken += [f"unresolved reference: {text}" for text in opened.facts["missingReferences"]]
    broken += [f"unresolved reference marker: {place}" for place in _in_context(UNRESOLVED, opened.facts["text"])]
    assert not broken, "\n".join(broken)


# For each solution dropdown: its id and whether each part of its body is visible.
SOLUTION_BODIES = """Array.from(document.querySelectorAll("div.solution.dropdown"), (solution) => ({
  id: solution.id,
  shown: Array.from(solution.querySelectorAll(":scope > :not(.admonition-title)"), visible),
}))"""


def test_solutions_are_hidden_until_toggled(opened):
    page = opened.page
    before = _ask(page, SOLUTION_BODIES)
    assert len(before) == _solution_count(opened.docname), (
        f"{len(before)} solution dropdowns on the page, "
        f"{_solution_count(opened.docname)} solution directives in {_source(opened.docname).name}")
    solutions = page.locator("div.solution.dropdown")
    for index, solution in enumerate(before):
        assert solution["shown"], f"solution {index + 1} has no body"
        assert not any(solution["shown"]), f"{solution['id']} is shown before a click"
        solutions.nth(index).locator(":scope > .admonition-title button.toggle-button").click()
        solutions.nth(index).locator(":scope > :not(.admonition-title)").first.wait_for(state="visible", timeout=5_000)
        after = _ask(page, SOLUTION_BODIES)[index]
        assert all(after["shown"]), f"{solution['id']} is not shown after a click"
    assert not opened.console_errors, "\n".join(opened.console_errors)


def test_verification_cells_are_collapsed_one_click_away(opened):
    page = opened.page
    code_shown = _ask(page, """Array.from(document.querySelectorAll("div.cell.tag_hide-input, div.cell.tag_hide-cell"),
                                         (cell) => visible(cell.querySelector(".cell_input")))""")
    expected = _collapsed_cell_count(opened.docname)
    assert len(code_shown) == expected, (
        f"{len(code_shown)} collapsed cells on the page, {expected} tagged in the source")
    shown = [i for i, visible in enumerate(code_shown) if visible]
    assert not shown, f"collapsed cells whose code is visible before a click: {shown}"
    if expected:
        first = page.locator("div.cell.tag_hide-input, div.cell.tag_hide-cell").first
        first.locator("details > summary").first.click()
        first.locator(".cell_input").wait_for(state="visible", timeout=5_000)
    assert not opened.console_errors, "\n".join(opened.console_errors)


def test_figure_captions_are_shown(opened):
    hidden = _ask(opened.page, """Array.from(document.querySelectorAll("div.cell_output figure"))
                                    .filter((figure) => !visible(figure.querySelector("figcaption")))
                                    .map((figure) => figure.id)""")
    assert not hidden, f"figures whose caption is not visible: {hidden}"


@pytest.mark.parametrize("opened", [SCREENSHOT_PAGE], indirect=True)
def test_screenshot_of_a_chapter_is_saved(opened):
    header = SCREENSHOT.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
    assert width == VIEWPORT["width"] and height > VIEWPORT["height"], (width, height)


@pytest.mark.parametrize("opened", API_PAGES, indirect=True)
def test_api_page_shows_signatures_and_no_rest_source(opened):
    """An API page: each documented name has a visible signature, and its text holds no reST
    (a docstring Sphinx could not parse shows its source, e.g. a role or a heading)."""
    signatures = _ask(opened.page, """Array.from(document.querySelectorAll("article dl.py > dt.sig"), (signature) => ({
      id: signature.id, visible: visible(signature), text: signature.innerText,
      function: signature.parentElement.classList.contains("function"),
    }))""")
    source = _source(opened.docname).read_text(encoding="utf-8")
    documented = re.search(r"^\.\. (auto(?!module)\w+|py:\w+)::", source, re.MULTILINE)
    assert signatures or not documented, "the page documents names but shows no signature"
    hidden = [signature["id"] for signature in signatures if not signature["visible"]]
    assert not hidden, f"signatures not visible: {hidden}"
    bare = [signature["id"] for signature in signatures if signature["function"] and "(" not in signature["text"]]
    assert not bare, f"functions shown without their parameters: {bare}"
    leftovers = _in_context(RAW_REST, opened.facts["text"])
    assert not leftovers, "reST source left in the text (a docstring Sphinx did not parse):\n" + "\n".join(leftovers)
