"""pytest setup shared by unit tests and nbval notebook runs (kernels inherit this environment)."""
import os
from pathlib import Path

_shared = Path(__file__).resolve().parent.parent / "shared" / "data"
if "DEFSENT_DATA" not in os.environ and _shared.exists():
    os.environ["DEFSENT_DATA"] = str(_shared)
if "NLTK_DATA" not in os.environ and _shared.exists():
    os.environ["NLTK_DATA"] = str(_shared / "dictionary" / "wordnet" / "nltk_data")
# Progress bars go to stderr, which nbval compares: off under pytest, on for a reader.
os.environ.setdefault("DEFSENT_PROGRESS", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
