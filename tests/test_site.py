"""Issue 48: the website built from the committed notebooks (tools/build_site.py), opened page by
page in headless Chromium as a reader would: every page loads from the site alone, every
equation of notebooks 10, 21 and 30 is typeset, every figure a notebook shows is displayed, no
link between pages is broken. Skipped, saying why, where Chromium or Playwright is missing;
`.ci/run` installs Debian's Chromium. DEFSENT_SITE_SCREENSHOT=path keeps the screenshot of
notebook 10's equations (else it goes to pytest's temporary folder)."""
import functools
import http.server
import os
import re
import shutil
import struct
import threading
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest

import build_site

CHROMIUM = os.environ.get("DEFSENT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
# as this machine's notes start it: no sandbox as root, no background connections to refuse
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
TABS = 8   # pages open at once: 8 loaded the site about 3 s sooner than 4 on 2 cores (2026-11-28)
NARROW = (1024, 390)   # a laptop's window and a phone, beside the 1280 px every check above runs at
METHOD_NOTEBOOKS = ("10_defsent_word_prediction", "21_defsentplus_pst_spaces", "30_gausscse_nli")


def test_build_refuses_to_empty_a_folder_it_did_not_build(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(SystemExit, match="not a site built by this tool"):
        build_site.build(tmp_path)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_a_failed_rebuild_keeps_the_old_site_and_bad_sources_are_named(tmp_path, monkeypatch):
    """Issue 72: a failed rebuild had already deleted the old site; a broken notebook stopped the
    builder without naming it; a link to a missing figure went to GitHub without a word."""
    out = tmp_path / "site"
    build_site.build(out)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    def fails(page, *args):
        raise RuntimeError("disk full")
    monkeypatch.setattr(build_site, "render", fails)
    with pytest.raises(RuntimeError, match="disk full"):
        build_site.build(out)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    monkeypatch.undo()
    with pytest.raises(SystemExit, match="a link to results/no_such_figure.png, which the repository"):
        build_site.rewrite_links('<img src="../results/no_such_figure.png">',
                                 build_site.ROOT / "notebooks" / "x.ipynb", {})
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "10_broken.ipynb").write_text('{"cells": [')
    monkeypatch.setattr(build_site, "ROOT", tmp_path)
    with pytest.raises(SystemExit, match="notebooks/10_broken.ipynb is not a readable notebook"):
        build_site.notebook_pages()


def test_links_point_at_pages_results_or_github():
    pages = {"notebooks/10_defsent_word_prediction": "10_defsent_word_prediction.html",
             "docs/methods": "methods.html", "README": "index.html"}
    text = ('<a href="../docs/methods.md#gausscse">m</a><img src="../results/32_gausscse_figure2.png">'
            '<a href="10_defsent_word_prediction.ipynb">n</a><a href="../tools/gpu_check.py">t</a>'
            '<p><code>docs/methods.md</code> and <code>10_defsent_word_prediction</code></p>')
    out = build_site.rewrite_links(text, build_site.ROOT / "notebooks" / "x.ipynb", pages)
    assert 'href="methods.html#gausscse"' in out and 'src="results/32_gausscse_figure2.png"' in out
    assert 'href="10_defsent_word_prediction.html">n' in out
    assert f'href="{build_site.github("tools/gpu_check.py")}"' in out
    assert out.count('<a href="methods.html"><code>') == 1
    assert out.count('<a href="10_defsent_word_prediction.html"><code>') == 1


def equations(markdown):
    """How many formulas MathJax should typeset in a Markdown cell: $$...$$ and $...$ outside code."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    display = re.findall(r"\$\$.+?\$\$", text, flags=re.S)
    text = re.sub(r"\$\$.+?\$\$", "", text, flags=re.S)
    return len(display) + len(re.findall(r"(?<!\\)\$[^$]+?(?<!\\)\$", text))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built from the repository, served on localhost for the session."""
    out = tmp_path_factory.mktemp("site")
    pages = build_site.build(out)
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.handle_error = lambda request, address: None   # a tab closed mid-response: not an error
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield dict(out=out, pages=pages, url=f"http://127.0.0.1:{server.server_port}/")
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def visited(site, tmp_path_factory):
    """Every page opened in Chromium once: what loaded, what the reader sees, the links."""
    if not CHROMIUM:
        pytest.skip("no Chromium (Debian: apt-get install chromium; or set DEFSENT_CHROMIUM): "
                    "the site is not checked in a browser")
    sync_api = pytest.importorskip("playwright.sync_api", reason='pip install -e ".[docs]"')
    shot = Path(os.environ.get("DEFSENT_SITE_SCREENSHOT") or tmp_path_factory.mktemp("shot") / "10.png")
    facts = {}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        pages = site["pages"]
        for start in range(0, len(pages), TABS):   # a few tabs at once, each page in its own
            opened = [(entry, _open(context, site["url"] + entry["file"]))
                      for entry in pages[start:start + TABS]]
            for entry, (page, record) in opened:
                facts[entry["file"]] = _read(page, record)
                if entry["name"] == METHOD_NOTEBOOKS[0]:
                    page.get_by_role("heading", name="The idea in one equation").evaluate(
                        "h => h.scrollIntoView()")
                    page.screenshot(path=str(shot))
                page.close()
        layout = {width: _layouts(browser, site, width, shot.with_name(f"10_{width}.png"))
                  for width in NARROW}
        browser.close()
    print(f"screenshot of notebook 10's page: {shot}")
    return dict(facts=facts, shot=shot, layout=layout)


def _layouts(browser, site, width, shot):
    """{page file: LAYOUT's facts} of every page at a window `width` px wide (a phone's at 390),
    and a screenshot of notebook 10's first equation there."""
    context = browser.new_context(viewport={"width": width, "height": 800})
    found, pages = {}, site["pages"]
    for start in range(0, len(pages), TABS):
        opened = [(entry, _open(context, site["url"] + entry["file"])) for entry in pages[start:start + TABS]]
        for entry, (page, _) in opened:
            page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
            found[entry["file"]] = page.evaluate(LAYOUT)
            if entry["name"] == METHOD_NOTEBOOKS[0]:
                page.get_by_role("heading", name="The idea in one equation").evaluate("h => h.scrollIntoView()")
                page.screenshot(path=str(shot))
            page.close()
    context.close()
    return found


def _open(context, url):
    """A new tab on `url`, recording what it asks of any host but the site's (FLAGS resolve no
    other host), every response with an error status and every script error."""
    page = context.new_page()
    record = dict(outside=[], failed=[], errors=[])
    page.on("request", lambda r: record["outside"].append(r.url)
            if urlsplit(r.url).hostname not in (None, "127.0.0.1") else None)
    page.on("response", lambda r: record["failed"].append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("pageerror", lambda e: record["errors"].append(str(e)))
    record["status"] = page.goto(url, wait_until="commit").status
    return page, record


def _read(page, record):
    """What a reader sees once MathJax is done: formulas, images (loaded, size), links, ids."""
    page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
    page.wait_for_load_state("load")
    seen = page.evaluate(READ)
    return dict(seen, **record)


# What a reader at a narrow window meets: the page scrolling sideways (px beyond the window), a
# wide equation, table or printed output that neither fits nor scrolls within its own box (cut
# off), the Colab badges' width, printed lines wrapped mid-word, the page's height and contents.
LAYOUT = """() => {
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const boxes = '.MathJax_Display, .jp-RenderedHTMLCommon table, .jp-OutputArea-output, .jp-OutputArea-output pre, .jp-InputArea-editor .highlight pre';
  return {
    wider: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    cut: [...document.querySelectorAll(boxes)].filter(e => e.scrollWidth > e.clientWidth + 1 && !scrolls(e))
      .map(e => e.className + ': ' + (e.innerText || '').slice(0, 50)),
    badges: [...document.querySelectorAll('img[alt="Open In Colab"]')].map(i => i.getBoundingClientRect().width),
    wrapped: [...document.querySelectorAll('.jp-OutputArea-output pre')]
      .filter(p => getComputedStyle(p).whiteSpace !== 'pre').length,
    height: document.documentElement.scrollHeight,
    contents: !!document.querySelector('.site-toc'),
    sections: document.querySelectorAll('main h2').length,
    banner: !!document.querySelector('.site-banner'),
  };
}"""

READ = """() => {
  const md = [...document.querySelectorAll('.jp-MarkdownOutput')];
  return {
    math_scripts: md.reduce((n, c) => n + c.querySelectorAll('script[type^="math/tex"]').length, 0),
    math_rendered: md.reduce((n, c) => n + c.querySelectorAll('.MathJax, .MathJax_Display').length, 0),
    math_errors: document.querySelectorAll('.MathJax_Error, .merror').length,
    dollars_left: md.filter(c => c.innerText.includes('$')).map(c => c.innerText.slice(0, 80)),
    images: [...document.images].map(i => ({src: i.getAttribute('src').slice(0, 60),
      loaded: i.complete && i.naturalWidth > 0, width: i.getBoundingClientRect().width,
      aspect: i.naturalWidth / Math.max(i.naturalHeight, 1)})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  };
}"""


def test_every_page_loads_from_the_site_alone(site, visited):
    assert set(visited["facts"]) == {p["file"] for p in site["pages"]}
    for file, facts in visited["facts"].items():
        assert facts["status"] == 200, file
        assert not facts["outside"], f"{file} fetched from the internet: {facts['outside'][:3]}"
        assert not facts["failed"], f"{file}: {facts['failed'][:3]}"
        assert not facts["errors"], f"{file}: script errors {facts['errors'][:3]}"
        assert facts["math_errors"] == 0, f"{file}: {facts['math_errors']} formulas MathJax refused"


def test_every_equation_of_the_method_notebooks_is_typeset(visited):
    for name in METHOD_NOTEBOOKS:
        nb = nbformat.read(build_site.ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        expected = sum(equations(c.source) for c in nb.cells if c.cell_type == "markdown")
        facts = visited["facts"][f"{name}.html"]
        assert expected >= 10, f"{name}: only {expected} formulas found in its Markdown"
        assert facts["math_scripts"] == expected, f"{name}: {facts['math_scripts']} typeset of {expected}"
        assert facts["math_rendered"] >= expected, name
        assert not facts["dollars_left"], f"{name}: raw TeX left in {facts['dollars_left'][:2]}"


def png_aspect(path):
    """Width / height of a PNG file, from its header."""
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width / height


def test_every_figure_a_notebook_shows_is_displayed(site, visited):
    """Each figure of results/ is shown on the page of the notebook that saved it (an image of the
    same aspect, within 3%, loaded and at least 250 px wide), and every image of every page loads."""
    figures = sorted((build_site.ROOT / "results").glob("*.png"))
    found = {}
    for entry in site["pages"]:
        images = visited["facts"][entry["file"]]["images"]
        assert all(i["loaded"] for i in images), f"{entry['file']}: {images}"
        if entry["kind"] != "notebook":
            continue
        said = "".join(str(o.get("text", "")) for c in entry["nb"].cells if c.cell_type == "code"
                       for o in c.get("outputs", []))
        for figure in (f for f in figures if f"results/{f.name}" in said):
            shown = [i for i in images if i["loaded"] and i["width"] >= 250
                     and abs(i["aspect"] / png_aspect(figure) - 1) < 0.03]
            assert shown, f"{entry['file']} saved {figure.name} but shows no image like it: {images}"
            found[figure.name] = entry["file"]
    assert sorted(found) == [f.name for f in figures], f"no notebook shows {set(f.name for f in figures) - set(found)}"
    home = visited["facts"]["index.html"]["images"]
    assert any(i["src"].startswith("results/") and i["loaded"] for i in home), home


def test_no_link_between_pages_is_broken(site, visited):
    ids = {file: set(f["ids"]) for file, f in visited["facts"].items()}
    checked = 0
    for file, facts in visited["facts"].items():
        for href in facts["links"]:
            if re.match(r"^[a-z][a-z0-9+.-]*:", href, flags=re.I):
                continue   # GitHub, Colab, the papers: outside the site
            target = urlsplit(urljoin(file, href))
            path = target.path or file
            assert (site["out"] / path).is_file(), f"{file}: broken link {href}"
            if target.fragment and path.endswith(".html"):
                assert target.fragment in ids[path], f"{file}: no #{target.fragment} in {path}"
            checked += 1
    assert checked > 20 * len(site["pages"])   # the contents column alone links every page


def test_a_screenshot_of_notebook_10_shows_its_equations(visited):
    assert visited["shot"].stat().st_size > 20_000


def unreadable(layout):
    """What a reader cannot read on a page at a narrow window (LAYOUT's facts), as messages."""
    problems = [f"the page scrolls {layout['wider']} px sideways"] if layout["wider"] > 1 else []
    problems += [f"cut off (neither fits nor scrolls): {c}" for c in layout["cut"]]
    problems += [f"a Colab badge squeezed to {w:.0f} px" for w in layout["badges"] if w < 100]
    problems += [f"{layout['wrapped']} printed outputs wrapped mid-line"] if layout["wrapped"] else []
    if layout["height"] > 5 * 800 and layout["sections"] > 1 and not layout["contents"]:
        problems.append(f"{layout['height']} px tall with {layout['sections']} sections and no contents")
    return problems


@pytest.mark.parametrize("width", NARROW)
def test_every_page_reads_at_a_laptops_and_a_phones_width(visited, width):
    """Issue 71: at 1024 px and at 390 px (a phone) no page scrolls sideways, every wide equation,
    table and printed output scrolls within its own box, the badges keep their size, printed lines
    are not broken, and a long page lists its sections at its top."""
    found = {file: unreadable(layout) for file, layout in visited["layout"][width].items()}
    assert {file: p for file, p in found.items() if p} == {}


def test_the_readability_check_sees_a_page_made_unreadable(site, visited):
    """The check above fails on a page whose boxes no longer scroll, whose badge is squeezed and
    whose printed lines wrap (the site's style rules undone), and on a long page without contents."""
    sync_api = pytest.importorskip("playwright.sync_api")
    undo = (".MathJax_Display, .jp-RenderedHTMLCommon table, .jp-OutputArea-output, .jp-OutputArea-output pre"
            " { overflow: visible !important; display: block; white-space: pre-wrap !important; }"
            ' img[alt="Open In Colab"] { width: 40px !important; } .site-toc { display: none; }')
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 390, "height": 800})
        page.goto(site["url"] + "20_defsentplus_datasets.html")
        page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
        page.add_style_tag(content=undo)
        page.evaluate("() => document.querySelector('.site-toc') && document.querySelector('.site-toc').remove()")
        broken = page.evaluate(LAYOUT)
        browser.close()
    problems = " | ".join(unreadable(broken))
    assert "cut off" in problems or "sideways" in problems, problems
    assert "squeezed" in problems and "wrapped" in problems and "no contents" in problems, problems


def test_pages_that_show_a_stand_ins_numbers_say_so(site, visited):
    """Issue 71: a notebook page whose stored outputs come from the smoke scale's stand-in model
    says so at its top (the paper's numbers beside them are context)."""
    for entry in (e for e in site["pages"] if e["kind"] == "notebook"):
        banner = visited["layout"][390][entry["file"]]["banner"]
        assert banner == build_site.shows_stand_in(entry["nb"]), entry["file"]
    assert sum(build_site.shows_stand_in(e["nb"]) for e in site["pages"] if e["kind"] == "notebook") >= 12


def test_stored_outputs_are_readable_text():
    """No stored output carries a progress bar's redraws, raw TeX or hundreds of lines (a reader
    scrolls past it; the notebooks print summaries)."""
    for path in sorted((build_site.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            for out in cell.get("outputs", []):
                text = str(out.get("text", "")) + str(out.get("data", {}).get("text/plain", ""))
                where = f"{path.name} cell {i}"
                assert "\r" not in text and "it/s]" not in text, f"{where}: a progress bar"
                assert "\\begin{" not in text, f"{where}: raw TeX"
                assert text.count("\n") <= 200, f"{where}: {text.count(chr(10))} lines"
