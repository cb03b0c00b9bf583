"""Build the notebooks as a website to read, from their committed outputs (nothing is executed).

    python tools/build_site.py              # into site/ (git ignores it); open site/index.html
    python tools/build_site.py --out DIR

One page per notebook, in the notebooks' order and grouped by paper, with its equations, code,
outputs and figures; README as the home page; each of docs/*.md as a page. nbconvert renders the
notebooks as JupyterLab does (the outputs are the notebooks' own: no second renderer, no Node, no
Sphinx); MathJax 2 comes from the `jupyter-server-mathjax` package and is copied into the site, so
a page fetches nothing from the internet when it is viewed. `tests/test_site.py` opens every page
in headless Chromium. Install with `pip install -e ".[docs]"`.
"""
import argparse
import html
import posixpath
import re
import shutil
import sys
import time
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parent.parent
SITE_FILES = Path(__file__).resolve().parent / "site"   # the page template, CSS, the badge
sys.path.insert(0, str(ROOT))
from defsent_lite.repro import colab  # noqa: E402  (REPOSITORY and BRANCH: where links point)
sys.path.insert(0, str(ROOT / "tools"))
import sync_colab  # noqa: E402  (the badges' Colab address)

MARK = ".defsent-site"   # a built site holds this file: only such a folder is ever replaced
MATHJAX = "_static/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
GROUPS = {"0": "Data and baselines", "1": "DefSent (2021)", "2": "DefSent+ (2024)",
          "3": "GaussCSE (2023)", "9": "Benchmarks"}
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def heading(text, fallback):
    """The first Markdown heading of `text`, without its #s and links."""
    match = re.search(r"^#+\s+(.+)$", text, flags=re.M)
    title = match.group(1).strip() if match else fallback
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)


def notebook_pages():
    """Every notebooks/NN_*.ipynb, in order: its name, title, group and page file."""
    pages = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as e:  # broken JSON, an unknown format: name the file
            raise SystemExit(f"build_site: {path.relative_to(ROOT)} is not a readable notebook "
                             f"({type(e).__name__}: {str(e)[:200]})") from None
        first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
        pages.append(dict(kind="notebook", name=path.stem, source=path, nb=nb,
                          title=heading(first, path.stem), group=GROUPS.get(path.name[0], "More"),
                          file=f"{path.stem}.html"))
    return pages


def doc_pages():
    """README as the home page, then docs/*.md in the order README's table lists them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"`docs/([\w-]+)\.md`", readme)
    docs = sorted((ROOT / "docs").glob("*.md"),
                  key=lambda p: (listed.index(p.stem) if p.stem in listed else len(listed), p.stem))
    return [dict(kind="markdown", name="index", source=ROOT / "README.md", title="Home",
                 group="Start here", file="index.html")] + [
        dict(kind="markdown", name=path.stem, source=path, group="Documents",
             title=heading(path.read_text(encoding="utf-8"), path.stem), file=f"{path.stem}.html")
        for path in docs]


def nav(pages, current):
    """The contents column: every page under its group, the current one marked."""
    parts = ['<nav class="site-nav"><a class="site-title" href="index.html">defsent_lite</a>']
    group = None
    for page in pages:
        if page["group"] != group:
            parts.append(("</ul>" if group else "") + f"<h2>{html.escape(page['group'])}</h2><ul>")
            group = page["group"]
        mark = ' class="current"' if page is current else ""
        parts.append(f'<li><a{mark} href="{page["file"]}">{html.escape(page["title"])}</a></li>')
    return "".join(parts) + "</ul></nav>"


def github(path):
    return f"https://github.com/{colab.REPOSITORY}/blob/{colab.BRANCH}/{path}"


def top(page):
    """Above a page: where its source is, and for a notebook its Colab badge."""
    rel = page["source"].relative_to(ROOT).as_posix()
    if page["kind"] != "notebook":
        return f'<div class="site-top">source: <a href="{github(rel)}">{rel}</a></div>'
    return (f'<div class="site-top">source: <a href="_sources/{page["name"]}.py">'
            f'{rel.removesuffix(".ipynb")}.py</a>'
            f'<a href="{github(rel)}">{rel} on GitHub</a>'
            f'<a href="{sync_colab.notebook_url(page["name"] + ".ipynb")}">'
            f'<img src="_static/colab-badge.svg" alt="Open In Colab"></a></div>')


BANNER = ('<div class="site-banner"><b>Smoke scale.</b> The outputs on this page were computed on a '
          "2-core CPU with small stand-ins for the papers' models (mini-BERT, the repository's own "
          "raw masked LM; all-MiniLM-L6-v2 for a contrastive checkpoint), on subsets of the data: "
          "they show the pipeline and the method's mechanism, and the paper's numbers beside them "
          'are context, not a comparison. Open it in Colab with <code>SCALE = "colab"</code> or '
          '<code>"paper"</code> for the papers\' models.</div>')


def shows_stand_in(nb):
    """Whether a notebook's stored outputs come from a stand-in model (the smoke scale's mini-BERT,
    or all-MiniLM-L6-v2 where it stands in for a contrastive checkpoint)."""
    return any(name in str(cell.get("outputs", "")) for cell in nb.cells
               for name in ("mini-bert-uncased", "all-MiniLM-L6-v2"))


def contents(body):
    """A page's own contents: a link to each of its ## headings (none for fewer than two)."""
    found = re.findall(r'<h2 id="([^"]+)">(.*?)<a class="anchor-link"', body)
    return ('<details class="site-toc" open><summary>On this page</summary><ul>'
            + "".join(f'<li><a href="#{anchor}">{title}</a></li>' for anchor, title in found)
            + "</ul></details>") if len(found) > 1 else ""


def bottom(previous, following):
    link = lambda page, arrow: (f'<a href="{page["file"]}">{arrow}{html.escape(page["title"])}</a>'
                                if page else "<span></span>")
    return f'<div class="site-bottom">{link(previous, "← ")}{link(following, "→ ")}</div>'


def site_target(repo_path, pages_by_source):
    """Where a link to `repo_path` (relative to the repository) points in the site."""
    path, _, fragment = repo_path.partition("#")
    fragment = "#" + fragment if fragment else ""
    stem = Path(path).with_suffix("").as_posix()
    if stem in pages_by_source:                      # a notebook (.ipynb or .py) or a Markdown page
        return pages_by_source[stem] + fragment
    if not (ROOT / path).exists():
        raise SystemExit(f"build_site: a link to {path}, which the repository does not hold")
    if re.match(r"^(results|docs)/[\w.-]+\.png$", path):
        return path + fragment                       # a figure: copied into the site
    return github(path) + fragment                   # any other file: read it on GitHub


def rewrite_links(text, source, pages_by_source):
    """Point the page's relative links at the site (pages, results) or at GitHub, link the
    `docs/*.md` and notebook names written as code, and serve the Colab badge from the site."""
    base = source.parent.relative_to(ROOT)
    site_files = set(pages_by_source.values())

    def attribute(match):
        name, value = match.group(1), html.unescape(match.group(2))
        if value == COLAB_BADGE:
            return f'{name}="_static/colab-badge.svg"'
        if re.match(r"^([a-z][a-z0-9+.-]*:|#|//|_static/|_sources/)", value, flags=re.I) or \
                value.split("#")[0] in site_files:     # the site's own: absolute, or written here
            return match.group(0)
        # relative to the repository, never above its root
        repo_path = re.sub(r"^(\.\./)+", "", posixpath.normpath((base / value.split("#")[0]).as_posix()))
        repo_path += "#" + value.split("#", 1)[1] if "#" in value else ""
        return f'{name}="{html.escape(site_target(repo_path, pages_by_source))}"'

    text = re.sub(r'\b(href|src)="([^"]*)"', attribute, text)

    def code(match):
        stem = Path(html.unescape(match.group(1))).with_suffix("").as_posix()
        stem = stem if stem in pages_by_source else f"notebooks/{stem}"
        if stem not in pages_by_source:
            return match.group(0)
        return f'<a href="{pages_by_source[stem]}">{match.group(0)}</a>'

    # <code> not already inside a link: docs/x.md, README.md, a notebook's name
    return re.sub(r'(?<!">)<code>((?:docs/[\w-]+\.md|README\.md|\d\d_\w+(?:\.ipynb|\.py)?))</code>'
                  r'(?!</a>)', code, text)


def render(page, exporter, pages, pages_by_source):
    """One page's HTML: a notebook as it is, a Markdown file as a notebook of one Markdown cell."""
    if page["kind"] == "notebook":
        nb = page["nb"]
    else:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
            page["source"].read_text(encoding="utf-8"))])
    index = pages.index(page)
    site = dict(nav=nav(pages, page), top=top(page),
                bottom=bottom(pages[index - 1] if index else None,
                              pages[index + 1] if index + 1 < len(pages) else None))
    body, _ = exporter.from_notebook_node(
        nb, resources=dict(metadata=dict(name=f"{page['title']} · defsent_lite"), site=site))
    banner = BANNER if page["kind"] == "notebook" and shows_stand_in(nb) else ""
    body = re.sub(r'(<div class="site-top">.*?</div>)',   # below the page's top line (no <div> in it)
                  lambda m: m.group(1) + banner + contents(body), body, count=1, flags=re.S)
    return rewrite_links(body, page["source"], pages_by_source)


def prepare(out):
    """An empty folder for the site (a failed build's left-overs removed)."""
    shutil.rmtree(out, ignore_errors=True)
    (out / "_static").mkdir(parents=True)
    (out / "_sources").mkdir()
    (out / MARK).write_text("built by tools/build_site.py\n", encoding="utf-8")


def copy_static(out):
    """The page style, the Colab badge, MathJax (fonts included), the figures of results/ and docs/."""
    try:
        import jupyter_server_mathjax
    except ImportError:
        raise SystemExit('build_site: MathJax is served from the package jupyter-server-mathjax: '
                         'pip install -e ".[docs]"') from None
    shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static",
                    out / "_static" / "mathjax")
    shutil.copy(SITE_FILES / "site.css", out / "_static" / "site.css")
    shutil.copy(SITE_FILES / "colab-badge.svg", out / "_static" / "colab-badge.svg")
    for folder in ("results", "docs"):   # the figures README, docs and notebooks link to
        (out / folder).mkdir()
        for figure in sorted((ROOT / folder).glob("*.png")):
            shutil.copy(figure, out / folder / figure.name)


def build(out):
    """Build the whole site into `out`; returns the pages written (dicts with 'file', 'title')."""
    final = Path(out).resolve()
    if final.exists() and any(final.iterdir()) and not (final / MARK).is_file():
        raise SystemExit(f"build_site: {final} exists and is not a site built by this tool "
                         f"(no {MARK} in it); choose another --out")
    out = final.with_name(f".{final.name}.building")   # a failed build leaves the old site as it was
    prepare(out)
    copy_static(out)
    docs = doc_pages()
    pages = docs[:1] + notebook_pages() + docs[1:]
    pages_by_source = {p["source"].relative_to(ROOT).with_suffix("").as_posix(): p["file"]
                       for p in pages}
    exporter = HTMLExporter(template_name="defsent_site", extra_template_basedirs=[str(SITE_FILES)],
                            mathjax_url=MATHJAX)
    for page in pages:
        (out / page["file"]).write_text(render(page, exporter, pages, pages_by_source),
                                        encoding="utf-8")
        if page["kind"] == "notebook":
            shutil.copy(page["source"].with_suffix(".py"), out / "_sources" / f"{page['name']}.py")
    shutil.rmtree(final, ignore_errors=True)
    out.rename(final)
    return pages


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "site"), help="the folder to build into")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    pages = build(args.out)
    size = sum(f.stat().st_size for f in Path(args.out).rglob("*") if f.is_file())
    print(f"built {len(pages)} pages into {args.out} ({size / 2**20:.1f} MiB) "
          f"in {time.perf_counter() - start:.1f} s; open {Path(args.out) / 'index.html'}")


if __name__ == "__main__":
    main()
