#!/usr/bin/env python3
"""Print the built HTML book to one PDF with Chromium (`make pdf`).

    python scripts/make_pdf.py [--html _build/html] [--out _build/pdf/book.pdf]

Nothing is executed or rebuilt: the pages that `make book` wrote (or `make book SOLUTIONS=0`,
with `--html _build/html-nosolutions`) are put, in the order of `_toc.yml`, into one print
document behind a title page and a table of contents: the article of each page (no
sidebars, header or buttons), its links rewritten to point inside the document, its ids
made unique, its images and stylesheets taken from the built book. A local HTTP server on
127.0.0.1 serves it to headless Chromium (Debian's `chromium`, driven by Playwright, as in
tests/test_browser.py; any request to another host is refused), which

- typesets the mathematics with the book's own MathJax (the PDF waits for it to finish);
- prints A4 pages with the book's title in the header and the page number in the footer;
- turns the headings into PDF bookmarks (chapter titles, their sections and subsections)
  and the links of the contents and of cross-references into links inside the PDF.

pypdf then sets the document's title and author and opens the bookmarks pane, and pikepdf
packs the objects into compressed streams.

The size is kept down (the whole book, about 600 pages, in about 11 MB): the figures are
embedded as the PNG files of the HTML book (100 dpi, as on screen); shadows are switched
off, since Chromium rasterizes each one into a 300 dpi mask image (two per code cell, most
of a 58 MB book before); and the PDF is not tagged unless `--tagged` is given (`make pdf
TAGGED=1`): Chromium's structure tree, for screen readers, adds about a third.

What a printed page cannot do is undone: collapsed blocks (hint and solution dropdowns,
cells whose code or output the HTML hides behind "Show code") are printed open. In the
edition without solutions there is nothing of the solutions left to open: they are not in
its HTML.
"""

from __future__ import annotations

import argparse
import functools
import html
import io
import logging
import os
import posixpath
import re
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
LOCALHOST = "127.0.0.1"
DOCUMENT = "__book_print__.html"  # served at the root of the HTML folder, never written there
# Headless Chromium that talks to nothing but the local server (--no-sandbox: may run as root).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]

PRINT_CSS = """
@page { size: A4; margin: 17mm 16mm 17mm 16mm; }
html { font-size: 12.5px; }
body { background: white; margin: 0; }
.pdf-page { break-before: page; }
.pdf-cover { height: 230mm; display: flex; flex-direction: column; justify-content: center; text-align: center; }
.pdf-cover .pdf-title { font-size: 2.6rem; font-weight: 700; line-height: 1.2; margin-bottom: 1.5rem; }
.pdf-cover .pdf-author, .pdf-cover .pdf-edition { font-size: 1.3rem; color: #444; margin: 0.3rem; }
.pdf-contents { break-before: page; }
.pdf-contents .pdf-contents-title { font-size: 1.9rem; font-weight: 700; margin: 0 0 1.2rem; }
.pdf-contents .pdf-part { font-weight: 700; margin: 1rem 0 0.3rem; text-transform: uppercase; font-size: 0.95rem; color: #555; }
.pdf-contents ul { list-style: none; padding-left: 0; margin: 0; }
.pdf-contents ul ul { padding-left: 1.6rem; font-size: 0.95rem; }
.pdf-contents li { margin: 0.15rem 0; }
.pdf-contents a { color: inherit; text-decoration: none; }
main.pdf-book, article.bd-article { display: block; width: auto; max-width: none; margin: 0; padding: 0; }
h1, h2, h3 { break-after: avoid; }
a.headerlink, button, .toggle-button, .copybtn, .pdf-hide { display: none !important; }
details > summary { display: none !important; }
details > *:not(summary) { display: block; }
div.cell_input, div.highlight, .admonition-title, figure, img { break-inside: avoid; }
div.highlight pre, .output pre { white-space: pre-wrap; overflow-wrap: anywhere; overflow: visible; font-size: 0.86rem; }
img { max-width: 100% !important; height: auto; }
mjx-container[display="true"] { overflow: visible !important; }
.admonition, div.admonition { break-inside: auto; }
/* No shadows: Chromium prints each one as a 300 dpi soft-mask image (two per code cell,
   most of a 60 MB book). An id selector outranks the theme's own !important shadows. */
body *:not(#pdf-none), body *:not(#pdf-none)::before, body *:not(#pdf-none)::after {
  box-shadow: none !important; text-shadow: none !important; }
"""

FOOTER = (
    '<div style="width:100%;font-size:8px;color:#555;text-align:center;'
    'font-family:sans-serif"><span class="pageNumber"></span></div>'
)
HEADER = (
    '<div style="width:100%;font-size:7px;color:#888;text-align:center;'
    'font-family:sans-serif"><span class="title"></span></div>'
)

# Runs in the print document once loaded: waits for MathJax's typesetting, the fonts and
# the images; reports what did not render.
WAIT_FOR_RENDERING = r"""
async () => {
  const mathjax = window.MathJax;
  if (mathjax && mathjax.startup && mathjax.startup.promise) await mathjax.startup.promise;
  await document.fonts.ready;
  await Promise.all(Array.from(document.images, (img) => img.complete ? null : new Promise((done) => {
    img.addEventListener("load", done); img.addEventListener("error", done);
  })));
  // Collapsed blocks become plain blocks: Chromium printed an opened <details> of a hidden
  // cell as an empty frame.
  document.querySelectorAll("details").forEach((d) => {
    const block = document.createElement("div");
    block.className = d.className + " pdf-opened";
    Array.from(d.childNodes).forEach((n) => { if (n.nodeName !== "SUMMARY") block.appendChild(n); });
    d.replaceWith(block);
  });
  const math = Array.from(document.querySelectorAll(".math"));
  // The headings of every page, their math as text (MathJax's assistive MathML), for the bookmarks.
  const headings = [];
  document.querySelectorAll(".pdf-page").forEach((page) => {
    page.querySelectorAll("h1, h2, h3").forEach((heading) => {
      const section = heading.closest("section");
      const clone = heading.cloneNode(true);
      clone.querySelectorAll("a.headerlink").forEach((a) => a.remove());
      clone.querySelectorAll("mjx-container").forEach((m) => {
        const mml = m.querySelector("mjx-assistive-mml");
        m.replaceWith(document.createTextNode(mml ? mml.textContent : m.textContent));
      });
      headings.push({page: page.id, level: Number(heading.tagName[1]),
                     id: section && section.id ? section.id : null,
                     text: clone.textContent.replace(/\s+/g, " ").trim()});
    });
  });
  return {
    headings,
    mathjax: mathjax && mathjax.version ? mathjax.version : null,
    formulas: math.length,
    unrendered: math.filter((e) => !e.querySelector("mjx-container")).map((e) => e.textContent.slice(0, 80)),
    errors: Array.from(document.querySelectorAll("mjx-merror"), (e) => e.textContent.slice(0, 80)),
    brokenImages: Array.from(document.images).filter((img) => img.naturalWidth === 0).map((img) => img.src),
  };
}
"""


class PdfError(RuntimeError):
    """The PDF cannot be made (a missing tool or page, or a page that did not render)."""


def toc_pages(toc: Path = ROOT / "_toc.yml") -> list[tuple[str, str | None]]:
    """(docname, part caption) of every page of the table of contents, in reading order."""
    from sphinx_external_toc.parsing import parse_toc_yaml

    site = parse_toc_yaml(toc)
    pages: list[tuple[str, str | None]] = []

    def walk(docname: str, caption: str | None) -> None:
        pages.append((docname, caption))
        for subtree in site[docname].subtrees:
            for item in subtree.items:
                if isinstance(item, str):
                    walk(item, subtree.caption)

    walk(site.root.docname, None)
    return pages


def _slug(docname: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", docname)


def _page_document(html_dir: Path, docname: str, book: set[str]):
    """The article of a built page, rewritten for the print document; and its <head>."""
    from bs4 import BeautifulSoup

    path = html_dir / f"{docname}.html"
    if not path.is_file():
        raise PdfError(f"{path} is missing: build the book first (make book)")
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    article = soup.select_one("article.bd-article")
    if article is None:
        raise PdfError(f"{path} has no <article class='bd-article'>: not a page of this book's theme")
    page_dir = posixpath.dirname(docname)
    slug = _slug(docname)

    def local(url: str) -> tuple[str, str] | None:
        """(root-relative path, fragment) of a link inside the built book, else None."""
        parts = urlsplit(url)
        if parts.scheme or parts.netloc:
            return None
        if not parts.path:
            return docname + ".html", unquote(parts.fragment)
        return posixpath.normpath(posixpath.join(page_dir, unquote(parts.path))), unquote(parts.fragment)

    for element in article.find_all(attrs={"id": True}):
        element["id"] = f"{slug}--{element['id']}"
    for element in article.find_all("a", attrs={"name": True}):
        element["name"] = f"{slug}--{element['name']}"
    for link in article.find_all("a", href=True):
        target = local(link["href"])
        if target is None:
            continue  # another site, mailto:
        path_, fragment = target
        target_doc = path_[:-5] if path_.endswith(".html") else None
        if target_doc in book:
            link["href"] = f"#{_slug(target_doc)}--{fragment}" if fragment else f"#page-{_slug(target_doc)}"
        else:  # the index, the search page, a download: not in the PDF
            del link["href"]
    for element in article.find_all(src=True):
        target = local(element["src"])
        if target is not None:
            element["src"] = "/" + target[0]
    for element in article.find_all("img", srcset=True):
        del element["srcset"]
    return soup, article


def _heading_markup(heading) -> str:
    """The inner HTML of a heading without its permalink (its math stays for MathJax)."""
    import copy

    heading = copy.copy(heading)
    for link in heading.select("a.headerlink"):
        link.decompose()
    for link in heading.find_all("a"):
        link.unwrap()
    return heading.decode_contents().strip()


def _heading_text(heading) -> str:
    import copy

    heading = copy.copy(heading)
    for link in heading.select("a.headerlink"):
        link.decompose()
    return " ".join(heading.get_text(" ").split())


def _head(soup, docname: str) -> list[str]:
    """The stylesheets and the MathJax configuration and script of a page, root-relative."""
    page_dir = posixpath.dirname(docname)
    head = []
    for element in soup.head.find_all(["link", "style", "script"]):
        if element.name == "link" and "stylesheet" in (element.get("rel") or []):
            element["href"] = "/" + posixpath.normpath(posixpath.join(page_dir, urlsplit(element["href"]).path))
            head.append(str(element))
        elif element.name == "style":
            head.append(str(element))
        elif element.name == "script" and "mathjax" in (element.get("src") or "").lower():
            element["src"] = "/" + posixpath.normpath(posixpath.join(page_dir, urlsplit(element["src"]).path))
            head.append(str(element))
        elif element.name == "script" and not element.get("src") and "MathJax" in element.get_text():
            head.append(str(element))
    return head


def descendants_cpu_seconds() -> float | None:
    """CPU time (user + system, in seconds) used so far by the living descendants of this
    process, each with the time of the children it has reaped; None without Linux's /proc.

    Read before the browser closes, this is Chromium's CPU time (and that of Playwright's
    driver). ``resource.getrusage(RUSAGE_CHILDREN)`` misses most of it: when the browser
    exits, its zygote and renderer processes are orphaned and reaped by init, so their time
    never reaches this process."""
    if not os.path.isdir("/proc/self"):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    seconds: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8") as stat_file:
                stat = stat_file.read()
        except OSError:  # the process ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, ...
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        seconds[pid] = sum(int(value) for value in fields[11:15]) / ticks  # utime stime cutime cstime
    total, pending = 0.0, list(children.get(os.getpid(), []))
    while pending:
        pid = pending.pop()
        total += seconds[pid]
        pending.extend(children.get(pid, []))
    return total


def print_document(html_dir: Path, pages: list[tuple[str, str | None]], title: str, author: str,
                   edition: str | None = None) -> tuple[str, list[str]]:
    """The HTML of the whole book for printing, and the titles of its pages in order."""
    book = {docname for docname, _ in pages}
    head: list[str] | None = None
    bodies, titles, contents = [], [], []
    last_part = None
    for docname, part in pages:
        soup, article = _page_document(html_dir, docname, book)
        if head is None:
            head = _head(soup, docname)
        heading = article.find("h1")
        page_title = _heading_text(heading) if heading else docname
        titles.append(page_title)
        slug = _slug(docname)
        if part != last_part and part:
            contents.append(f'<div class="pdf-part">{html.escape(part)}</div>')
        last_part = part
        sections = []
        for h2 in article.find_all("h2"):
            section = h2.find_parent("section")
            if section is not None and section.get("id"):
                sections.append(f'<li><a href="#{section["id"]}">{_heading_markup(h2)}</a></li>')
        sub = f"<ul>{''.join(sections)}</ul>" if sections else ""
        title_markup = _heading_markup(heading) if heading else html.escape(docname)
        contents.append(f'<ul><li><a href="#page-{slug}">{title_markup}</a>{sub}</li></ul>')
        bodies.append(f'<div class="pdf-page" id="page-{slug}">{article.decode_contents()}</div>')
    edition_line = f'<div class="pdf-edition">{html.escape(edition)}</div>' if edition else ""
    document = f"""<!DOCTYPE html>
<html lang="en" data-theme="light" data-mode="light">
<!-- the article of every page, without the theme's containers (.bd-main .bd-content): the
     theme's print rules for them would hide each page's first heading and shift the text -->
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
{chr(10).join(head or [])}
<style>{PRINT_CSS}</style>
</head>
<body>
<main class="pdf-book"><article class="bd-article">
<div class="pdf-cover"><a class="pdf-hide" href="#pdf-contents">Contents</a>
<div class="pdf-title">{html.escape(title)}</div>
<div class="pdf-author">{html.escape(author)}</div>
{edition_line}
</div>
<nav class="pdf-contents" id="pdf-contents"><div class="pdf-contents-title">Contents</div>{''.join(contents)}</nav>
{''.join(bodies)}
</article></main>
</body>
</html>
"""
    return document, titles


class _Handler(SimpleHTTPRequestHandler):
    document = b""

    def do_GET(self):  # noqa: N802 (the base class's name)
        if urlsplit(self.path).path == "/" + DOCUMENT:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(self.document)))
            self.end_headers()
            self.wfile.write(self.document)
        else:
            super().do_GET()

    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        pass


def print_pdf(html_dir: Path, document: str, out: Path, chromium: Path = CHROMIUM, *,
              tagged: bool = False) -> dict:
    """Serve `document` beside `html_dir`, let Chromium typeset and print it to `out`;
    `tagged`: with Chromium's structure tags (for screen readers; a quarter of the size)."""
    if not chromium.is_file():
        raise PdfError(
            f"Chromium is missing ({chromium}): run `make browser-deps`, or install Debian's "
            f"package yourself (apt-get install chromium), or set CHROMIUM=/path/to/chromium"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        raise PdfError("playwright is missing: run `make venv` (it is in the `book` extra)") from error
    handler = type("Handler", (_Handler,), {"document": document.encode("utf-8")})
    server = ThreadingHTTPServer((LOCALHOST, 0), functools.partial(handler, directory=str(html_dir)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    refused: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1100, "height": 1400})
                page.set_default_timeout(600_000)

                def route(route):
                    if urlsplit(route.request.url).hostname == LOCALHOST:
                        route.continue_()
                    else:
                        refused.append(route.request.url)
                        route.abort("internetdisconnected")

                page.route("**/*", route)
                page.emulate_media(media="print")
                page.goto(f"http://{LOCALHOST}:{server.server_address[1]}/{DOCUMENT}", wait_until="load")
                facts = page.evaluate(WAIT_FOR_RENDERING)
                out.parent.mkdir(parents=True, exist_ok=True)
                page.pdf(
                    path=str(out),
                    format="A4",
                    print_background=True,
                    display_header_footer=True,
                    header_template=HEADER,
                    footer_template=FOOTER,
                    margin={"top": "17mm", "bottom": "17mm", "left": "16mm", "right": "16mm"},
                    tagged=tagged,  # the bookmarks come from finish() either way
                )
                facts["chromium_cpu_s"] = descendants_cpu_seconds()
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    facts["refused"] = refused
    return facts


def finish(raw: Path, out: Path, title: str, author: str, headings: list[dict],
           parts: dict[str, str | None]) -> int:
    """Write the PDF with its bookmarks and metadata, opened on the bookmarks; its page count.

    The bookmarks: "Contents", then each page of the book under its part of the table of
    contents ("Chapters", "Appendices"), with its sections and subsections (h2, h3). Each
    points where Chromium put the heading: the named destination of its section's id (a
    link target in the print document)."""
    import pikepdf
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import Fit

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # "Object count exceeds trailer size": harmless

    reader = PdfReader(str(raw))
    writer = PdfWriter(clone_from=reader)
    destinations = reader.named_destinations

    def target(name: str) -> tuple[int, Fit] | None:
        destination = destinations.get("/" + name)
        if destination is None:
            return None
        top = destination.get("/Top")
        fit = Fit.xyz(left=0, top=float(top)) if top is not None else Fit.fit()
        return reader.get_destination_page_number(destination), fit

    contents = target("pdf-contents")
    if contents is not None:
        writer.add_outline_item(title="Contents", page_number=contents[0], fit=contents[1])
    part_items: dict[str, object] = {}
    parents: dict[int, object] = {}
    seen_pages: set[str] = set()
    for heading in headings:
        page, level = heading["page"], heading["level"]
        if page not in seen_pages:  # the page's first heading: its title, the page's bookmark
            seen_pages.add(page)
            where = target(page) or target(heading["id"] or "")
            if where is None:
                raise PdfError(f"no destination for {page} in the printed PDF")
            part = parts.get(page)
            if part and part not in part_items:
                part_items[part] = writer.add_outline_item(title=part, page_number=where[0], fit=where[1], bold=True)
            parents = {1: writer.add_outline_item(title=heading["text"], page_number=where[0],
                                                  parent=part_items.get(part), fit=where[1])}
            continue
        level = max(level, 2)
        parent = parents.get(level - 1) or parents.get(1)
        where = target(heading["id"] or "") or target(page)
        parents[level] = writer.add_outline_item(title=heading["text"], page_number=where[0], parent=parent,
                                                 fit=where[1])
        for deeper in [key for key in parents if key > level]:
            del parents[deeper]
    writer.add_metadata({"/Title": title, "/Author": author, "/Creator": "scripts/make_pdf.py (Chromium)"})
    writer.page_mode = "/UseOutlines"
    buffer = io.BytesIO()
    writer.write(buffer)
    # pypdf writes every object on its own, uncompressed; pikepdf (qpdf) packs them into
    # compressed object streams (a tagged PDF has tens of thousands: its size falls by 60 %).
    with pikepdf.open(buffer) as pdf:
        pdf.save(out, object_stream_mode=pikepdf.ObjectStreamMode.generate, compress_streams=True,
                 recompress_flate=True)
    return len(writer.pages)


def book_metadata(config: Path) -> tuple[str, str]:
    import yaml

    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    return str(data.get("title", "Book")), str(data.get("author", ""))


def _cpu_used(chromium: float | None) -> str:
    """", N CPU-s with Chromium": this process's CPU time and that of Chromium (read before
    it closed); empty where /proc is missing."""
    if chromium is None:
        return ""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    return f", {own.ru_utime + own.ru_stime + chromium:.1f} CPU-s with Chromium"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="built HTML book")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf" / "book.pdf")
    parser.add_argument("--config", type=Path, default=ROOT / "_config.yml", help="for the title and author")
    parser.add_argument("--toc", type=Path, default=ROOT / "_toc.yml")
    parser.add_argument("--edition", default=None, help="a line under the title, e.g. 'Edition without solutions'")
    parser.add_argument("--only", nargs="+", metavar="DOCNAME", help="print only these pages (a quick look)")
    parser.add_argument("--tagged", action="store_true",
                        help="a tagged PDF, for screen readers: Chromium's structure tree adds about "
                             "a third to the size (the HTML book is the accessible edition)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    title, author = book_metadata(args.config)
    try:
        import bs4  # noqa: F401
        import pikepdf  # noqa: F401
        import pypdf  # noqa: F401
    except ImportError as error:
        raise PdfError(f"{error.name} is missing: run `make venv` (it is in the `book` extra)") from error
    html_dir = args.html.resolve()
    pages = [(doc, part) for doc, part in toc_pages(args.toc) if not args.only or doc in args.only]
    document, titles = print_document(html_dir, pages, title, author, args.edition)
    raw = args.out.with_suffix(".chromium.pdf")
    facts = print_pdf(html_dir, document, raw, tagged=args.tagged)
    problems = [f"formula not typeset: {text}" for text in facts["unrendered"][:10]]
    problems += [f"MathJax error: {text}" for text in facts["errors"][:10]]
    problems += [f"image not loaded: {src}" for src in facts["brokenImages"][:10]]
    problems += [f"request to another host refused: {url}" for url in facts["refused"][:10]]
    if not facts["mathjax"] and facts["formulas"]:
        problems.append("MathJax did not load: run `make mathjax` and build the book again")
    if problems:
        raw.unlink(missing_ok=True)
        raise PdfError("the print document did not render:\n  " + "\n  ".join(problems))
    parts = {f"page-{_slug(doc)}": part for doc, part in pages}
    count = finish(raw, args.out, title, author, facts["headings"], parts)
    raw.unlink()
    print(f"wrote {args.out}: {count} pages ({args.out.stat().st_size / 1e6:.1f} MB), "
          f"{len(titles)} pages of the book, {facts['formulas']} formulas, "
          f"{time.perf_counter() - start:.0f} s" + _cpu_used(facts["chromium_cpu_s"]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PdfError as error:
        sys.exit(f"make_pdf: {error}")
