"""Issue 44, point 3: the GPU self-check's reduced mode (a tiny BERT, 4 steps, 256 sentences, no
notebooks, two trainings at once) runs end to end on the CPU and fills every row of its table."""
import json
import math

import gpu_check


def test_reduced_self_check_fills_its_table(tmp_path):
    header, rows = gpu_check.run(reduced=True, out=tmp_path)
    assert header["model"].startswith("tiny BERT") and header["steps"] == 4
    whats = [r["what"] for r in rows]
    for method in ("DefSent", "GaussCSE"):
        assert f"{method} training, batch 16" in whats and f"{method} plan for 4 steps" in whats
    assert not any(w.startswith("notebook") for w in whats)
    packed = [r for r in rows if "at once on one device" in r["what"]]   # issue 70: K processes on one device
    assert [r["what"][:29] for r in packed] == ["DefSent training, batch 16, 1", "DefSent training, batch 16, 2"]
    assert packed[0]["ratio"] == 1 and packed[1]["baseline"] == packed[0]["value"]
    for r in rows:   # every timing a positive finite number, every ratio too
        assert all(math.isfinite(r[k]) and r[k] > 0 for k in ("value", "baseline", "ratio") if k in r), r
        assert "baseline" in r or r["what"].endswith("training, batch 16"), r
    encoding = next(r for r in rows if r["what"].startswith("encode"))
    assert encoding["min_cosine"] >= 0.99999   # the same vectors as sentence-transformers
    saved = json.loads((tmp_path / "gpu_check.json").read_text())
    assert saved["rows"] == json.loads(json.dumps(rows)) and "| what |" in (tmp_path / "gpu_check.md").read_text()


def test_an_unknown_part_is_named_before_any_work(tmp_path):
    import pytest
    with pytest.raises(ValueError, match=r"parts \['encoding'\]"):
        gpu_check.run(reduced=True, out=tmp_path, parts=("encoding",))
    assert not list(tmp_path.iterdir())
