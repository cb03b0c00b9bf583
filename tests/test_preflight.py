"""Issue 14, points 3-4: one data root resolved against the repository (never the working
directory); a preflight that lists everything missing and the one command that fetches it; at
paper scale no offline stand-in."""
import os

import pytest

from defsent_lite.runtime import config
from defsent_lite.data import download, sources
from defsent_lite.repro import preflight
from tiny_root import copy_tree

SHARED = config.data_root()


def test_without_a_setting_the_data_root_is_found_data_then_the_shared_folder_beside(tmp_path, monkeypatch):
    monkeypatch.delenv("DEFSENT_DATA", raising=False)
    monkeypatch.setenv("DEFSENT_HOME", str(tmp_path / "repo"))
    assert config.data_root() == tmp_path / "repo" / "data"          # nothing there: where a fetch writes
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert config.data_root() == tmp_path / "shared" / "data"        # ../shared/data beside the checkout
    (tmp_path / "repo" / "data").mkdir(parents=True)
    assert config.data_root() == tmp_path / "repo" / "data"          # the checkout's own data/ first
    monkeypatch.setenv("DEFSENT_DATA", str(tmp_path / "elsewhere"))
    assert config.data_root() == tmp_path / "elsewhere"


def test_relative_paths_resolve_against_the_project_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEFSENT_HOME", raising=False)
    assert config.resolve_path("data") == config.REPO / "data"
    assert config.data_root("data") == config.REPO / "data" and config.data_root(tmp_path) == tmp_path
    monkeypatch.setenv("DEFSENT_HOME", str(tmp_path / "home"))
    assert config.results_dir("results") == tmp_path / "home" / "results"
    monkeypatch.setenv("DEFSENT_CACHE", "c")
    assert config.cache_dir() == tmp_path / "home" / "c"


def test_on_the_offline_data_smoke_scale_says_which_stand_ins_it_uses():
    check = sources.check_data("10", "smoke", SHARED)
    assert check.missing == [] and len(check.stand_ins) == 1 and "Oxford valid+test only" in check.stand_ins[0]
    check = sources.check_data("30", "smoke", SHARED)
    assert check.missing == [] and "7,409 triplets" in check.stand_ins[0]


@pytest.mark.parametrize("notebook, need", [("10", "Oxford"), ("22", "Oxford"), ("30", "NLI training"), ("31", "NLI training")])
def test_paper_scale_takes_no_stand_in(notebook, need):
    check = sources.check_data(notebook, "paper", SHARED)
    assert [what for what, _ in check.missing] == [n.what for n in sources.needs(notebook, "paper") if n.what.startswith(need)]


def test_a_missing_file_stops_before_any_work_naming_it_and_the_fetch_command(tmp_path):
    root = tmp_path / "data"
    copy_tree("senteval", root)
    (root / "senteval/MR/rt-polarity.neg").unlink()
    with pytest.raises(preflight.PreflightFailed) as e:
        preflight.check("12", "smoke", root, [config.OFFLINE_MODEL])
    msg = str(e.value)
    assert "senteval/MR/rt-polarity.neg" in msg and "Oxford dictionary: missing" in msg
    assert f"python -m defsent_lite.data.download fetch --for 12 --scale smoke --root {root}" in msg


def test_models_are_checked_with_the_data(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty hub cache
    assert preflight.model_problem("offline") is None
    assert "HF_HUB_OFFLINE" in preflight.model_problem("bert-base-uncased")
    (tmp_path / "m").mkdir()
    assert "without config.json" in preflight.model_problem(str(tmp_path / "m"))
    with pytest.raises(preflight.PreflightFailed, match="model bert-base-uncased"):
        preflight.check("01", "smoke", SHARED, ["bert-base-uncased"])


def test_preflight_prints_one_line_and_the_stand_ins(capsys):
    preflight.check("31", "smoke", SHARED, [config.OFFLINE_MODEL])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("preflight: 2 data needs met") and out[1].startswith("offline stand-in (smoke/cpu only)")


def test_the_download_command_line_fetches_for_one_notebook(capsys):
    assert [s["name"] for s in download.select(notebook="13", scale="colab")] == ["oxford"]
    # at paper scale DefSent's later seeds are scored on STS (both file sets) and SentEval as trained
    paper = [s["name"] for s in download.select(notebook="13", scale="paper")]
    assert paper[-1] == "oxford" and {"STS12", "senteval-sts", "senteval"} <= set(paper)
    assert {s["name"] for s in download.select(notebook="01")} == set(
        sources.sources_for("01")) and "senteval" in sources.sources_for("01")
    with pytest.raises(SystemExit):
        download.main(["fetch", "--for", "99"])
    assert "invalid choice: '99'" in capsys.readouterr().err


def test_every_notebook_has_needs_and_every_needed_source_exists():
    for nb in sources.NOTEBOOKS:
        for scale in config.SCALES:
            for need in sources.needs(nb, scale):
                assert any(o.sources for o in need.options), (nb, need.what)
                for o in need.options:
                    assert o.paths(), (nb, need.what)
    assert os.path.exists(SHARED)


def test_paper_scale_refuses_the_oxford_stand_in_even_when_a_smoke_dataset_is_cached(tmp_path):
    from defsent_lite.runtime import models
    from defsent_lite.data import dictionary, entries, readers
    from defsent_lite.repro import defsent_protocol
    from tiny_root import copy_head
    for split in ("valid", "test"):
        copy_head(f"dictionary/oxford/{split}.tsv", tmp_path, 300)
    tok = models.load_tokenizer("offline")
    splits, report = dictionary.defsent_dataset(tok, tmp_path, use_wordnet=False)  # smoke: the stand-in, cached
    assert report["source"] == "Oxford valid+test" and splits["train"]
    with pytest.raises(readers.DataMissing, match="ishiwatari/train.txt not found.*fetch --only oxford"):
        dictionary.defsent_dataset(tok, tmp_path, use_wordnet=False, paper_data=True)
    with pytest.raises(readers.DataMissing, match="train split"):
        entries.load_entry_dataset("b", 20, tmp_path, paper_data=True)
    assert defsent_protocol.base_config(config.scale("paper"), "bert-base-uncased")["paper_data"] is True


def test_gausscse_trains_on_the_paper_data_or_says_which_stand_in(tmp_path):
    from defsent_lite.data import nli_readers
    from defsent_lite.repro import gausscse_protocol
    train = tmp_path / "nli" / "train"
    train.mkdir(parents=True)
    assert nli_readers.train_source("paper", tmp_path) == "simcse"
    (train / "nli_for_simcse.csv").write_text("sent0,sent1,hard_neg\na,b,c\n")
    assert nli_readers.train_source("smoke", tmp_path) == "simcse"  # a connected machine: a sample of the paper's data
    (train / "triplets.tsv").write_text("premise\tentailment\tcontradiction\na\tb\tc\n")
    assert nli_readers.train_source("smoke", tmp_path) == "offline"  # ../shared/data: the stand-in, as the notebooks say
    assert gausscse_protocol.base_config(config.scale("cpu"), "offline", tmp_path)["train_source"] == "offline"


def test_the_benchmarks_preflight_covers_the_dictionary_their_defsent_and_entry_runs_read():
    """Issue 33: notebook 90 trains DefSent (notebook 10's data) and builds entries of dataset c
    (notebook 20's data); its preflight fetched only STS and NLI before."""
    bench = sources.needs("90")
    assert all(n in bench for n in sources.needs("10") + sources.needs("20"))


def test_the_roberta_tokenizer_comes_from_the_hub_when_online(monkeypatch, capsys):
    """Issue 33: notebooks 00 and 20 asked for roberta-base with local_files_only=True, so a fresh
    Colab (online, empty cache) showed NaN in every RoBERTa column."""
    from defsent_lite.runtime import models
    asked = []

    def fake(name, **kw):
        asked.append((name, kw.get("local_files_only")))
        return type("Tok", (), {"vocab_size": 1})()
    monkeypatch.setattr(models.AutoTokenizer, "from_pretrained", fake)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    models.tokenizers_at_hand("bert-base-uncased", "roberta-base")
    assert ("roberta-base", False) in asked
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    asked.clear()
    models.tokenizers_at_hand("bert-base-uncased", "roberta-base")
    assert ("roberta-base", True) in asked
