from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics.pairwise import cosine_similarity

from defsent_lite.evaluation import senteval, sts
from defsent_lite.paper import results


def test_cosine_rows_matches_sklearn():
    rng = np.random.RandomState(0)
    a, b = rng.randn(20, 7), rng.randn(20, 7)
    assert np.allclose(sts.cosine_rows(a, b), np.diag(cosine_similarity(a, b)))


def test_sts_evaluate_by_hand(tmp_path):
    d = tmp_path / "sts" / "raw" / "STSBenchmark"
    d.mkdir(parents=True)
    (tmp_path / "EXCERPT").touch()  # not the pinned file: read as it is
    pairs = [("a", "b", 1.0), ("a", "c", 3.0), ("b", "c", 2.0), ("c", "d", 0.5)]
    d.joinpath("sts-test.csv").write_text("".join(f"g\tf\ty\t{i}\t{s}\t{x}\t{y}\n" for i, (x, y, s) in enumerate(pairs)))
    vec = {"a": [1, 0], "b": [1, 1], "c": [0, 1], "d": [-1, 0.2]}
    calls = []

    def embed(sentences):
        calls.append(list(sentences))
        return np.array([vec[s] for s in sentences], dtype=float)

    out = sts.evaluate(embed, data_dir=tmp_path, tasks=["STSB"])
    cos = [sts.cosine_rows(np.array([vec[x]]), np.array([vec[y]]))[0] for x, y, _ in pairs]
    assert out["STSB"] == pytest.approx(100 * spearmanr(cos, [p[2] for p in pairs]).statistic)
    assert out["avg"] == out["STSB"]
    assert len(calls) == 1 and sorted(calls[0]) == ["a", "b", "c", "d"]  # each sentence once


def test_sts_refuses_nan_embeddings(tmp_path):
    d = tmp_path / "sts" / "raw" / "STSBenchmark"
    d.mkdir(parents=True)
    (tmp_path / "EXCERPT").touch()  # not the pinned file: read as it is
    d.joinpath("sts-test.csv").write_text("g\tf\ty\t0\t1.0\ta\tb\n")
    with pytest.raises(ValueError, match="NaN"):
        sts.evaluate(lambda s: np.full((len(s), 2), np.nan), data_dir=tmp_path, tasks=["STSB"])


def test_protocols_learn_a_separable_task_and_fail_on_noise():
    rng = np.random.RandomState(0)
    y = np.repeat([0, 1], 100)
    X_sep = rng.randn(200, 4) + 3 * y[:, None]
    X_noise = rng.randn(200, 4)
    assert senteval.nested_cv_accuracy(X_sep, y, kfold=5) > 95
    assert senteval.nested_cv_accuracy(X_noise, y, kfold=5, inner_search=False) < 70
    assert senteval.cv_then_test_accuracy(X_sep[::2], y[::2], X_sep[1::2], y[1::2], kfold=5) > 95
    tr, dv, te = np.arange(0, 200, 3), np.arange(1, 200, 3), np.arange(2, 200, 3)
    assert senteval.dev_then_test_accuracy(X_sep[tr], y[tr], X_sep[dv], y[dv], X_sep[te], y[te]) > 95


def test_pair_features():
    vec = {"u": np.array([1.0, -2.0]), "v": np.array([3.0, 1.0])}
    feats = senteval.pair_features(vec["u"][None], vec["v"][None])
    assert np.allclose(feats, [[2.0, 3.0, 3.0, -2.0]])


def test_side_by_side_and_csv(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_RESULTS", str(tmp_path))
    paper = pd.DataFrame({"x": [1.0], "avg": [2.0]}, index=["row"])
    ours = pd.DataFrame({"x": [1.5], "avg": [1.0]}, index=["mine"])
    t = results.side_by_side(paper, ours, {"R": ("row", "mine")})
    assert t.loc[("R", "diff"), "x"] == 0.5 and t.loc[("R", "diff"), "avg"] == -1.0
    shown = results.save_csv(t, "t.csv", model="m", scale="smoke")
    path = tmp_path / "t.csv"
    assert shown == "results/t.csv"
    text = path.read_text()
    assert "# model: m" in text and "# torch:" in text
    back = pd.read_csv(path, comment="#", index_col=[0, 1])
    assert back.loc[("R", "ours"), "x"] == 1.5


def test_result_csv_reads_back_with_wordpiece_tokens(tmp_path):
    df = pd.DataFrame({"words": ["barry ##ivision ##box", "play ##ing"], "score": [1.5, float("nan")]})
    path = tmp_path / "t.csv"
    results.save_csv(df, str(path), model="m", runs={"cls": 10})
    header, back = results.read_csv(path, index_col=0)
    assert header["model"] == "m" and header["runs"] == "{'cls': 10}" and "torch" in header
    assert back["words"].tolist() == df["words"].tolist() and back["score"].iloc[0] == 1.5


def test_a_failed_write_keeps_the_old_table_and_a_table_cut_short_is_refused(tmp_path, monkeypatch):
    """Issue 46: save_csv truncated the old table before writing (an error mid-write left a header
    and one row), and read_csv returned a table cut short without error. Now the table is written
    aside and renamed, and its header's row count is checked on reading."""
    path = tmp_path / "t.csv"
    results.save_csv(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), str(path), model="m")
    header, back = results.read_csv(path, index_col=0)
    assert header["rows"] == "3" and back["x"].tolist() == [1.0, 2.0, 3.0]
    before = path.read_text()

    def fails_midway(self, f, *a, **k):
        f.write(",x\n0,9.0\n")
        raise OSError("disk full")
    monkeypatch.setattr(pd.DataFrame, "to_csv", fails_midway)
    with pytest.raises(OSError, match="disk full"):
        results.save_csv(pd.DataFrame({"x": [9.0, 8.0]}), str(path), model="m")
    monkeypatch.undo()
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["t.csv"]
    lines = before.splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")   # the last row lost, as a kill mid-write left it
    with pytest.raises(ValueError, match="t.csv: 2 rows where its header says 3: the table was cut short"):
        results.read_csv(path, index_col=0)


def test_a_published_seed_mean_stands_beside_the_mean_of_every_seed_of_ours(monkeypatch):
    """Issue 45, item 2: DefSent+ Table 2's DefSent row is DefSent's 10-seed mean; ours is the mean
    over every seed DefSent's protocol trained, not the first seed's, at the pooling of the model's
    row (BERT-base: Mean), scored as the DefSent+ rows beside it (issue 71: SentEval's files)."""
    from defsent_lite.paper.results import STS_COLS
    from defsent_lite.repro import defsent_scores, defsentplus_protocol, defsentplus_tables
    from defsent_lite.runtime import config
    asked = []

    def sts(scale, model, poolings, data_dir=None, variant="official", files="raw"):
        asked.append((model, poolings, variant, files))
        seeds = [{c: x + i for i, c in enumerate(STS_COLS)} for x in (70.0, 72.0, 77.0)]
        return defsent_scores.Scored({}, {poolings[0]: seeds}, {}, poolings, "pretrained", "data")
    monkeypatch.setattr(defsent_scores, "sts", sts)
    label, pooling, row, n = defsentplus_tables.defsent_row({}, "bert-base-uncased")
    assert (label, pooling, n) == ("DefSent (Mean)", "mean", 3) and asked == [("bert-base-uncased", ["mean"], "official", "senteval")]
    assert defsentplus_protocol.STS_FILES == "senteval" == defsent_scores.sts_scorings(
        defsent_scores.seed_scoring(config.scale("smoke")))[1][1]   # scored when trained
    assert row == [73.0 + i for i in range(len(STS_COLS))]

def test_a_table_without_its_rows_line_or_unreadable_is_refused_naming_the_file(tmp_path):
    """Issue 72, case 5 and read_csv's unclear crashes: a table without a rows line was read
    unchecked (cut by 3 lines, 33 rows of 36 silently); a rows line that is not a number, an empty
    file and a broken table gave pandas' errors without the file; an index named '# pooling' was
    taken for a header line. Every committed table carries its rows line."""
    path = tmp_path / "t.csv"
    df = pd.DataFrame({"x": [1.0, 2.0]}, index=pd.Index(["cls", "mean"], name="# pooling"))
    results.save_csv(df, str(path), model="m")
    header, back = results.read_csv(path, index_col=0)
    assert back.index.name == "# pooling" and back["x"].tolist() == [1.0, 2.0]
    text = path.read_text()
    cases = {
        "no rows line": text.replace("# rows: 2\n", ""),
        "rows not a number": text.replace("# rows: 2", "# rows: two"),
        "empty": "",
        "broken table": text.split("# pooling")[0] + '"unclosed,x\n',
    }
    for case, broken in cases.items():
        path.write_text(broken)
        with pytest.raises(ValueError, match="t.csv: "):
            results.read_csv(path, index_col=0)
    with pytest.raises(ValueError, match="'note' holds a line break"):
        results.save_csv(df, str(path), note="two\nlines")
    for table in sorted(Path(__file__).parents[1].glob("results/*.csv")):
        header, rows = results.read_csv(table)
        assert len(rows) == int(header["rows"]) > 0, table.name


def test_two_saves_of_one_table_in_one_process_write_under_different_temporary_names(tmp_path, monkeypatch):
    """Issue 72: the temporary name was the table's and the process id, shared by two threads
    saving one table (one renamed the other's half-written file)."""
    import os
    seen, replace = [], os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: seen.append(str(a)) or replace(a, b))
    for _ in range(2):
        results.save_csv(pd.DataFrame({"x": [1.0]}), str(tmp_path / "t.csv"), model="m")
    assert len(seen) == 2 and seen[0] != seen[1]


def test_a_table_cut_inside_its_last_row_or_with_a_header_it_cannot_keep_is_refused(tmp_path):
    """Issue 85, case 2 and its silent acceptances: a table cut inside its last row read as whole
    (`max,69.9,7` gave 7.0 instead of 74.3, or a NaN); a header value with a carriage return was
    written and then refused by read_csv, a key holding ': ' came back as another key; a byte-order
    mark or non-UTF-8 bytes were reported as a missing rows line, two header rows as a cut table."""
    path = tmp_path / "t.csv"
    df = pd.DataFrame({"a": [70.1, 69.9], "b": [75.0, 74.3]}, index=pd.Index(["min", "max"], name="stat"))
    results.save_csv(df, str(path), model="m")
    text = path.read_text()
    assert text.endswith("max,69.9,74.3\n")
    for cut in (text[:-4], text[:-1]):   # "max,69.9,7" and "max,69.9,74.3" without its line break
        path.write_text(cut)
        with pytest.raises(ValueError, match="t.csv: its last line has no line break: the table was cut inside"):
            results.read_csv(path, index_col=0)
    for meta in (dict(note="one\rtwo"), {"a: b": 1}):
        with pytest.raises(ValueError, match="save_csv .*t2.csv: the header line of"):
            results.save_csv(df, str(tmp_path / "t2.csv"), **meta)
    assert not (tmp_path / "t2.csv").exists()
    path.write_text("\ufeff" + text)
    with pytest.raises(ValueError, match="t.csv: starts with a byte-order mark"):
        results.read_csv(path, index_col=0)
    path.write_bytes(text.encode() + b"\xff\n")
    with pytest.raises(ValueError, match="t.csv: not UTF-8 text"):
        results.read_csv(path, index_col=0)
    head, rows = text.split("stat,a,b\n")   # two header rows: the comment block or the column names
    n = head.count("\n")   # the comment block's lines: the column names are line n + 1
    for joined, line in ((text + text, n + 4), (head + "stat,a,b\nstat,a,b\n" + rows, n + 2)):
        path.write_text(joined)
        with pytest.raises(ValueError, match=f"t.csv:{line}: a second header"):
            results.read_csv(path, index_col=0)
