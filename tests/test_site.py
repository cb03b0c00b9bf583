"""The book (tools/book/conf.py: Sphinx, MyST-NB, the Sphinx Book Theme) built from the committed
notebooks and documents, opened page by page in headless Chromium as a reader would: every page
loads from the book alone, every equation of notebooks 10, 21 and 30 is typeset, every figure a
notebook shows is displayed, no link between pages is broken, and every page reads at 1280, 1024
and 390 px (a phone). Skipped, saying why, where Chromium or Playwright is missing; `.ci/run`
installs Debian's Chromium. DEFSENT_SITE_SCREENSHOT=folder keeps the screenshots of notebooks 10
and 21 at 1024 and 390 px (docs/book_*.png are made so)."""
import functools
import http.server
import importlib.util
import os
import re
import shutil
import struct
import threading
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "tools" / "book"
CHROMIUM = os.environ.get("DEFSENT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
# as this machine's notes start it: no sandbox as root, no background connections to refuse
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
TABS = 8   # pages open at once: 8 loaded the site about 3 s sooner than 4 on 2 cores (2026-11-28)
WIDTHS = (1280, 1024, 390)   # a desktop, a laptop's window and a phone
SHOWN = ("10_defsent_word_prediction", "21_defsentplus_pst_spaces")   # screenshots at 1024, 390 px
METHOD_NOTEBOOKS = ("10_defsent_word_prediction", "21_defsentplus_pst_spaces", "30_gausscse_nli")


def book_conf():
    spec = importlib.util.spec_from_file_location("book_conf", BOOK / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def build(source, out):
    """sphinx-build -W (a warning fails the build) of `source` into `out`: (exit status, messages)."""
    from sphinx.cmd.build import build_main
    log = out.with_name(out.name + ".log")
    status = build_main(["-W", "-q", "-b", "html", "-c", str(BOOK), "-w", str(log), str(source), str(out)])
    return status, log.read_text(encoding="utf-8") if log.exists() else ""


def pages_of(source):
    """The book's pages: README, docs/*.md, notebooks/NN_*.ipynb, as their HTML files."""
    return (["README.html"] + [f"docs/{p.stem}.html" for p in sorted((source / "docs").glob("*.md"))]
            + [f"notebooks/{p.stem}.html" for p in sorted((source / "notebooks").glob("[0-9][0-9]_*.ipynb"))])


def test_a_bad_notebook_or_a_missing_figure_fails_the_build_naming_it(tmp_path):
    """Sphinx's warnings are errors: a notebook that is not JSON and a figure that is not there
    each stop the build with the file's name, instead of a page that silently lacks them."""
    source = tmp_path / "src"
    (source / "docs").mkdir(parents=True)
    (source / "notebooks").mkdir()
    (source / "README.md").write_text("# Home\n\n![a figure](results/no_such_figure.png)\n")
    (source / "notebooks" / "10_broken.ipynb").write_text('{"cells": [')
    status, messages = build(source, tmp_path / "out")
    assert status != 0
    assert "no_such_figure.png" in messages and "10_broken" in messages, messages


def equations(markdown):
    """How many formulas MathJax should typeset in a Markdown cell: $$...$$ and $...$ outside code."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    display = re.findall(r"\$\$.+?\$\$", text, flags=re.S)
    text = re.sub(r"\$\$.+?\$\$", "", text, flags=re.S)
    return len(display) + len(re.findall(r"(?<!\\)\$[^$]+?(?<!\\)\$", text))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The book built from the repository, served on localhost for the session."""
    out = tmp_path_factory.mktemp("book") / "html"
    status, messages = build(ROOT, out)
    assert status == 0, messages
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.handle_error = lambda request, address: None   # a tab closed mid-response: not an error
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield dict(out=out, pages=pages_of(ROOT), url=f"http://127.0.0.1:{server.server_port}/")
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def visited(site, tmp_path_factory):
    """Every page opened in Chromium once: what loaded, what the reader sees, the links; then its
    layout at each width (the window resized, the page not loaded again); screenshots of notebooks
    10 and 21 at their first equation."""
    if not CHROMIUM:
        pytest.skip("no Chromium (Debian: apt-get install chromium; or set DEFSENT_CHROMIUM): "
                    "the book is not checked in a browser")
    sync_api = pytest.importorskip("playwright.sync_api", reason='pip install -e ".[docs]"')
    shots = Path(os.environ.get("DEFSENT_SITE_SCREENSHOT") or tmp_path_factory.mktemp("shots"))
    facts, layout = {}, {width: {} for width in WIDTHS}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(viewport=window(WIDTHS[0]))
        for start in range(0, len(site["pages"]), TABS):   # a few tabs at once
            opened = [(file, _open(context, site["url"] + file)) for file in site["pages"][start:start + TABS]]
            for file, (page, record) in opened:
                page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
                page.wait_for_load_state("load")
                facts[file] = dict(page.evaluate(READ), **record)
                page.add_style_tag(content=STILL)   # a resized window is measured as it settles
                for width in WIDTHS:
                    page.set_viewport_size(window(width))
                    layout[width][file] = page.evaluate(LAYOUT)
                    if Path(file).stem in SHOWN and width != WIDTHS[0]:
                        page.locator("div.math").first.evaluate("e => e.scrollIntoView({block: 'center'})")
                        page.screenshot(path=str(shots / f"book_{file[10:12]}_at_{width}px.png"))
                page.close()
        browser.close()
    print(f"screenshots of notebooks 10 and 21: {shots}")
    return dict(facts=facts, layout=layout, shots=shots)


STILL = "*, *::before, *::after { transition: none !important; animation: none !important; }"


def window(width):
    return {"width": width, "height": 900 if width > 500 else 800}


def _open(context, url):
    """A new tab on `url`, recording what it asks of any host but the book's (FLAGS resolve no
    other host), every response with an error status and every script error."""
    page = context.new_page()
    record = dict(outside=[], failed=[], errors=[])
    page.on("request", lambda r: record["outside"].append(r.url)
            if urlsplit(r.url).hostname not in (None, "127.0.0.1") else None)
    page.on("response", lambda r: record["failed"].append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.on("pageerror", lambda e: record["errors"].append(str(e)))
    record["status"] = page.goto(url, wait_until="commit").status
    return page, record


# What a reader meets on a page: the page scrolling sideways (px beyond the window); a wide
# equation, table or output that neither fits nor scrolls in its own box (cut off); a progress
# bar's redraws; an output of hundreds of lines; a table too wide to read; printed lines wrapped;
# the Colab badges' width; where the page's own content starts (a phone's first screen must hold
# it); its height, its sections and whether it lists them.
LAYOUT = r"""() => {
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const article = document.querySelector('article.bd-article');
  const outputs = [...article.querySelectorAll('.cell_output pre')];
  const first = article.querySelector('h1, p');
  const boxes = [...article.querySelectorAll('div.math, .MathJax_Display, table, .cell_output pre, .cell_output .output, div.highlight pre')];
  const name = e => e.tagName + '.' + e.className + ': ' + (e.innerText || '').slice(0, 50);
  return {
    wider: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    cut: boxes.filter(e => e.scrollWidth > e.clientWidth + 1 && !scrolls(e)).map(name),
    cueless: boxes.filter(e => e.scrollWidth > e.clientWidth + 1 && scrolls(e)
      && getComputedStyle(e).scrollbarWidth !== 'thin').map(name),
    progress: outputs.filter(o => /\r|it\/s\]|\d+%\|/.test(o.textContent)).length
      + article.querySelectorAll('progress, .widget-progress').length,
    longest: Math.max(0, ...outputs.map(o => o.textContent.split('\n').length)),
    columns: Math.max(0, ...[...article.querySelectorAll('tr')].map(r => r.children.length)),
    wrapped: [...article.querySelectorAll('.cell_output pre')].filter(p => getComputedStyle(p).whiteSpace !== 'pre').length,
    badges: [...article.querySelectorAll('img[alt="Open In Colab"]')].map(i => i.getBoundingClientRect().width),
    content_top: first ? first.getBoundingClientRect().top + window.scrollY : 1e9,
    window: window.innerHeight,
    height: document.documentElement.scrollHeight,
    contents: document.querySelectorAll('.bd-toc-nav a, .page-toc a').length,
    sections: article.querySelectorAll('h2').length,
    banner: !!document.querySelector('.book-banner'),
  };
}"""

# What a reader sees once MathJax is done: the formulas of the text (outside code cells), the
# images (loaded, size), the links and the ids.
READ = r"""() => {
  const text = [...document.querySelectorAll('article.bd-article :is(p, li, td, div.math)')].filter(e => !e.closest('.cell'));
  return {
    math_scripts: document.querySelectorAll('article.bd-article script[type^="math/tex"]').length
      - document.querySelectorAll('article.bd-article .cell script[type^="math/tex"]').length,
    math_rendered: text.reduce((n, e) => n + e.querySelectorAll('.MathJax, .MathJax_Display').length, 0),
    math_errors: document.querySelectorAll('.MathJax_Error, .merror').length,
    tex_left: text.filter(e => /\\\(|\\\[|\$/.test(e.innerText)).map(e => e.innerText.slice(0, 80)),
    images: [...document.images].map(i => ({src: i.getAttribute('src').slice(0, 60),
      loaded: i.complete && i.naturalWidth > 0, width: i.getBoundingClientRect().width,
      aspect: i.naturalWidth / Math.max(i.naturalHeight, 1)})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  };
}"""


def test_every_page_loads_from_the_book_alone(site, visited):
    assert set(visited["facts"]) == set(site["pages"])
    for file, facts in visited["facts"].items():
        assert facts["status"] == 200, file
        assert not facts["outside"], f"{file} fetched from the internet: {facts['outside'][:3]}"
        assert not facts["failed"], f"{file}: {facts['failed'][:3]}"
        assert not facts["errors"], f"{file}: script errors {facts['errors'][:3]}"
        assert facts["math_errors"] == 0, f"{file}: {facts['math_errors']} formulas MathJax refused"


def test_every_equation_of_the_method_notebooks_is_typeset(visited):
    for name in METHOD_NOTEBOOKS:
        nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        expected = sum(equations(c.source) for c in nb.cells if c.cell_type == "markdown")
        facts = visited["facts"][f"notebooks/{name}.html"]
        assert expected >= 10, f"{name}: only {expected} formulas found in its Markdown"
        assert facts["math_scripts"] == expected, f"{name}: {facts['math_scripts']} typeset of {expected}"
        assert facts["math_rendered"] >= expected, name
        assert not facts["tex_left"], f"{name}: raw TeX left in {facts['tex_left'][:2]}"


def png_aspect(path):
    """Width / height of a PNG file, from its header."""
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width / height


def test_every_figure_a_notebook_shows_is_displayed(site, visited):
    """Each figure of results/ is shown on the page of the notebook that saved it (an image of the
    same aspect, within 3%, loaded and at least 250 px wide), and every image of every page loads."""
    figures = sorted((ROOT / "results").glob("*.png"))
    found = {}
    for file in site["pages"]:
        images = visited["facts"][file]["images"]
        assert all(i["loaded"] for i in images), f"{file}: {images}"
        if not file.startswith("notebooks/"):
            continue
        nb = nbformat.read(ROOT / file.replace(".html", ".ipynb"), as_version=4)
        said = "".join(str(o.get("text", "")) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
        for figure in (f for f in figures if f"results/{f.name}" in said):
            shown = [i for i in images if i["loaded"] and i["width"] >= 250
                     and abs(i["aspect"] / png_aspect(figure) - 1) < 0.03]
            assert shown, f"{file} saved {figure.name} but shows no image like it: {images}"
            found[figure.name] = file
    assert sorted(found) == [f.name for f in figures], f"no notebook shows {set(f.name for f in figures) - set(found)}"
    assert any(i["loaded"] and i["width"] >= 250 for i in visited["facts"]["README.html"]["images"])


def test_no_link_between_pages_is_broken(site, visited):
    ids = {file: set(f["ids"]) for file, f in visited["facts"].items()}
    checked = 0
    for file, facts in visited["facts"].items():
        for href in facts["links"]:
            if re.match(r"^([a-z][a-z0-9+.-]*:|#$)", href, flags=re.I):
                continue   # GitHub, Colab, the papers: outside the book; "#": a button
            target = urlsplit(urljoin(file, href))
            path = target.path or file
            assert (site["out"] / path).is_file(), f"{file}: broken link {href}"
            if target.fragment and path in ids:
                assert target.fragment in ids[path], f"{file}: no #{target.fragment} in {path}"
            checked += 1
    assert checked > 20 * len(site["pages"])   # the contents column alone links every page
    assert "url=README.html" in (site["out"] / "index.html").read_text()   # where a browser looks first


def test_screenshots_of_notebooks_10_and_21_show_their_equations(visited):
    for name in SHOWN:
        for width in WIDTHS[1:]:
            assert (visited["shots"] / f"book_{name[:2]}_at_{width}px.png").stat().st_size > 20_000


def unreadable(layout):
    """What a reader cannot read on a page (LAYOUT's facts), as messages."""
    problems = [f"the page scrolls {layout['wider']} px sideways"] if layout["wider"] > 1 else []
    problems += [f"cut off (neither fits nor scrolls): {c}" for c in layout["cut"]]
    problems += [f"scrolls with no scroll bar kept drawn: {c}" for c in layout["cueless"]]
    problems += [f"{layout['progress']} progress bars"] if layout["progress"] else []
    problems += [f"an output of {layout['longest']} lines"] if layout["longest"] > 200 else []
    problems += [f"a table of {layout['columns']} columns"] if layout["columns"] > 16 else []
    problems += [f"{layout['wrapped']} printed outputs wrapped mid-line"] if layout["wrapped"] else []
    problems += [f"a Colab badge squeezed to {w:.0f} px" for w in layout["badges"] if w < 100]
    if layout["content_top"] > layout["window"] * 0.75:
        problems.append(f"the first screen holds no content (it starts {layout['content_top']:.0f} px down)")
    if layout["height"] > 5 * layout["window"] and layout["sections"] > 1 and not layout["contents"]:
        problems.append(f"{layout['height']} px tall with {layout['sections']} sections and no contents")
    return problems


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_reads_at_a_desktops_a_laptops_and_a_phones_width(visited, width):
    """No page scrolls sideways; every wide equation, table and printed output scrolls within its
    own box, its scroll bar kept drawn (the cue that more lies beyond); no progress bar, no output
    of hundreds of lines, no table of more than 16 columns; the badges keep their size, printed
    lines are not broken, the first screen holds the page's own content, and a long page lists its
    sections."""
    found = {file: unreadable(layout) for file, layout in visited["layout"][width].items()}
    assert {file: p for file, p in found.items() if p} == {}


UNDO = ("div.math, table, .cell_output pre { overflow: visible !important; display: block; white-space: pre-wrap !important; }"
        " div.highlight pre { scrollbar-width: auto !important; }"
        ' img[alt="Open In Colab"] { width: 40px !important; } .bd-toc-nav, .page-toc { display: none; }')
SPOIL = r"""() => {
  const article = document.querySelector('article.bd-article');
  const output = text => { const d = document.createElement('div'); d.className = 'cell_output';
    d.innerHTML = '<pre></pre>'; d.firstChild.textContent = text; article.append(d); };
  output(' 40%|####      | 4/10 [00:01<00:02, 3.9it/s]');
  output(Array.from({length: 3000}, (_, i) => 'line ' + i).join('\n'));
  const row = n => '<tr>' + Array.from({length: 40}, (_, i) => '<td>col' + i + '</td>').join('') + '</tr>';
  article.insertAdjacentHTML('beforeend', '<table>' + row() + row() + '</table>');
  article.insertAdjacentHTML('beforeend', '<div class="math" style="overflow: hidden !important; '
    + 'white-space: nowrap">' + 'x + '.repeat(300) + 'x</div>');
  article.insertAdjacentHTML('afterbegin', '<div style="height: 1400px">navigation</div>');
  document.querySelectorAll('.bd-toc-nav a, .page-toc a').forEach(a => a.remove());
}"""


def test_the_readability_check_sees_a_page_made_unreadable(site, visited):
    """The check above fails on a page given a progress bar, a 3,000-line output, a 40-column
    table, a clipped equation and 1,400 px before its first line, and on one whose boxes no longer
    scroll or scroll with no scroll bar drawn, whose badge is squeezed, whose printed lines wrap and
    whose contents are gone."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 390, "height": 800})
        page.goto(site["url"] + "notebooks/20_defsentplus_datasets.html")
        page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
        assert unreadable(page.evaluate(LAYOUT)) == []
        page.evaluate(SPOIL)
        spoiled = " | ".join(unreadable(page.evaluate(LAYOUT)))
        page.add_style_tag(content=UNDO)
        undone = " | ".join(unreadable(page.evaluate(LAYOUT)))
        browser.close()
    for problem in ("progress bars", "an output of 3000 lines", "a table of 40 columns",
                    "cut off (neither fits nor scrolls): DIV.math", "the first screen holds no content"):
        assert problem in spoiled, (problem, spoiled)
    for problem in ("squeezed", "wrapped", "no contents", "no scroll bar kept drawn"):
        assert problem in undone, (problem, undone)


def test_pages_that_show_a_stand_ins_numbers_say_so(site, visited):
    """A notebook page whose stored outputs come from the smoke scale's stand-in model says so
    below its title (the paper's numbers beside them are context)."""
    conf = book_conf()
    shown = {file: conf.shows_stand_in(ROOT / file.replace(".html", ".ipynb"))
             for file in site["pages"] if file.startswith("notebooks/")}
    assert {file: visited["layout"][390][file]["banner"] for file in shown} == shown
    assert sum(shown.values()) >= 12


def test_stored_outputs_are_readable_text():
    """No stored output carries a progress bar's redraws, raw TeX or hundreds of lines (a reader
    scrolls past it; the notebooks print summaries)."""
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            for out in cell.get("outputs", []):
                text = str(out.get("text", "")) + str(out.get("data", {}).get("text/plain", ""))
                where = f"{path.name} cell {i}"
                assert "\r" not in text and "it/s]" not in text, f"{where}: a progress bar"
                assert "\\begin{" not in text, f"{where}: raw TeX"
                assert text.count("\n") <= 200, f"{where}: {text.count(chr(10))} lines"
