"""The book: README, docs/*.md and the notebooks (their committed outputs, nothing executed) as
a website, through Sphinx, MyST-NB and the Sphinx Book Theme; MathJax 2 from the package
jupyter-server-mathjax, so a page fetches nothing from the internet. Build it with

    pip install -e ".[docs]" && sphinx-build -W -b html -c tools/book . site

and open site/index.html. tests/test_site.py opens every page in headless Chromium."""

import json
import re
from pathlib import Path

import jupyter_server_mathjax


project = "defsent_lite"
root_doc = "README"
include_patterns = ["README.md", "docs/*.md", "notebooks/[0-9][0-9]_*.ipynb"]
extensions = ["myst_nb"]
nb_execution_mode = "off"  # the notebooks' own committed outputs
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

html_theme = "sphinx_book_theme"
html_title = "defsent_lite"
html_static_path = [
    str(Path(__file__).parent / "static"),
    str(Path(jupyter_server_mathjax.__file__).parent / "static"),
]
html_css_files = ["book.css"]
html_js_files = ["book.js"]
html_theme_options = dict(
    repository_url="https://github.com/defsent-lite/defsent_lite",
    use_repository_button=True,
    show_toc_level=2,
)
mathjax_path = "MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"  # from jupyter-server-mathjax

COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"

GROUPS = {  # the contents column: the notebooks under their paper, then the documents
    "notebooks/0*": "Data and baselines",
    "notebooks/1*": "DefSent (2021)",
    "notebooks/2*": "DefSent+ (2024)",
    "notebooks/3*": "GaussCSE (2023)",
    "notebooks/4*": "The three side by side",
    "notebooks/9*": "Benchmarks",
    "docs/*": "Documents",
}
BANNER = (
    '<div class="book-banner"><b>Smoke scale.</b> The outputs on this page were computed on a '
    "2-core CPU with small stand-ins for the papers' models (mini-BERT, the repository's own "
    "raw masked LM; all-MiniLM-L6-v2 for a contrastive checkpoint), on subsets of the data: "
    "they show the pipeline and the method's mechanism, and the paper's numbers beside them "
    'are context, not a comparison. Open it in Colab with <code>SCALE = "colab"</code> or '
    '<code>"paper"</code> for the papers\' models.</div>'
)


def shows_stand_in(path):
    """Whether a notebook's stored outputs come from a stand-in model (the smoke scale's mini-BERT,
    or all-MiniLM-L6-v2 where it stands in for a contrastive checkpoint)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    outputs = json.dumps([cell.get("outputs", []) for cell in cells])
    return any(name in outputs for name in ("mini-bert-uncased", "all-MiniLM-L6-v2"))


def link_names(app, docname, source):
    """A document or notebook named as code (`docs/methods.md`, `10_defsent_word_prediction`)
    links to its page (a name with no page is then a broken link, which fails the build)."""
    up, code = "../" * docname.count("/"), r"(?<![`\[])`{}`(?![`\]])"
    source[0] = re.sub(code.format(r"(docs/[\w-]+\.md)"), rf"[`\1`]({up}\1)", source[0])
    notebook = code.format(r"(\d\d_[a-z_]+?)(\.ipynb|\.py)?")
    source[0] = re.sub(notebook, rf"[`\1\2`]({up}notebooks/\1.ipynb)", source[0])


def contents_tree(app, docname, source):
    """README, the home page, lists every notebook under its paper and every document."""
    if docname == root_doc:
        source[0] += "".join(
            f"\n\n```{{toctree}}\n:hidden:\n:glob:\n:caption: {caption}\n\n{pattern}\n```\n"
            for pattern, caption in GROUPS.items()
        )


def page_body(app, pagename, templatename, context, doctree):
    """The Colab badge served from the book itself; below a notebook's title, for the smoke
    scale's outputs, what they are."""
    if "body" not in context:
        return
    local = "../" * pagename.count("/") + "_static/colab-badge.svg"
    context["body"] = context["body"].replace(COLAB_BADGE, local)
    if pagename.startswith("notebooks/") and shows_stand_in(Path(app.srcdir) / f"{pagename}.ipynb"):
        context["body"] = context["body"].replace("</h1>", "</h1>" + BANNER, 1)


def home(app, exception):
    """index.html, where a browser or a web host looks first, leads to README's page."""
    if exception is None and app.builder.format == "html":
        redirect = '<meta http-equiv="refresh" content="0; url=README.html">'
        (Path(app.outdir) / "index.html").write_text(redirect, encoding="utf-8")


def setup(app):
    # MathJax on every page, formulas or not: book.js marks each page once it is typeset
    app.set_html_assets_policy("always")
    app.connect("source-read", link_names)
    app.connect("build-finished", home)
    app.connect("source-read", contents_tree)
    app.connect("html-page-context", page_body)
