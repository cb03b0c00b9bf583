"""One config shape: every scale is data with the same keys (no scale-dependent `S.get`)."""
import re
from pathlib import Path

from defsent_lite.runtime import config

ROOT = Path(__file__).resolve().parents[1]


def test_every_scale_has_the_same_keys():
    keys = {name: set(config.scale(name)) for name in config.SCALES}
    smoke = keys["smoke"]
    assert {name: sorted(k ^ smoke) for name, k in keys.items() if k != smoke} == {}


def test_no_code_reads_a_scale_setting_as_optional():
    """`S.get("...")` / `scale.get("...")` would hide a missing key; every key is present."""
    pattern = re.compile(r"\b(S|scale)\.get\(")
    files = list((ROOT / "defsent_lite").glob("*.py")) + list((ROOT / "notebooks").glob("*.py"))
    hits = [f"{p.name}:{i}" for p in files for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []
