"""Finding the paper's row for a model and setting: each lookup against rows read off the tables
by hand (the tables themselves are checked against the papers in test_reference_numbers.py)."""
import pandas as pd
import pytest

from defsent_lite.paper import aggregate
from defsent_lite.repro import defsent_protocol
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.repro import defsentplus_protocol, defsentplus_tables


@pytest.mark.parametrize("model,setting,ica,row", [
    ("bert-base-uncased", "1st-(Mean,AMP)-c", False, "DefSent+ BERT-base 1st-(Mean,AMP)-c"),
    ("bert-large-uncased", "1st-(CLS,AMP)-a", False, "DefSent+ BERT-large 1st-(Mean,AC)-a"),   # combination differs
    ("bert-large-uncased", "3rd-(CLS,AMP)-a", True, "DefSent+ BERT-large(ICA) 3rd-(CLS,AMP)-a"),
    ("roberta-base", "3rd-(Mean,AC)-a", False, "DefSent+ RoBERTa-base 3rd-(Mean,AC)-a"),      # not the released "*" row
    ("roberta-base", "3rd-(Mean,AC)-a", True, None),                                           # no ICA row for RoBERTa
    ("roberta-large", "2nd-(Mean,AC)-b", False, None),                                         # only the 1st Training on b
    ("sentence-transformers/all-MiniLM-L6-v2", "1st-(CLS,AMP)-a", False, None),
])
def test_table2_row_by_step_and_dataset(model, setting, ica, row):
    assert defsentplus_tables.table2_row(model, setting, ica) == row


def test_paired_label_names_the_papers_combination_where_it_differs():
    assert defsentplus_tables.paired_label("1st-(CLS,AMP)-a", "DefSent+ BERT-base 1st-(CLS,AMP)-a") == "1st-(CLS,AMP)-a"
    assert defsentplus_tables.paired_label("1st-(CLS,AMP)-a (ICA)", None) == "1st-(CLS,AMP)-a (ICA)"
    assert defsentplus_tables.paired_label("1st-(CLS,AMP)-a", "DefSent+ BERT-large 1st-(Mean,AC)-a") == "1st-(CLS,AMP)-a"
    assert (defsentplus_tables.paired_label("1st-(Mean,AC)-a", "DefSent+ BERT-large 1st-(Mean,AC)-a")
            == "1st-(Mean,AC)-a (paper: 1st-(CLS,AMP)-a)")   # the label says (Mean,AC), its numbers (CLS,AMP)
    assert (defsentplus_tables.paired_label("1st-(CLS,AMP)-b", "DefSent+ BERT-large 1st-(Mean,AC)-b")
            == "1st-(CLS,AMP)-b (paper: 1st-(Mean,AC)-b)")


def test_paper_combination_and_the_tables_derived_from_the_paper():
    # on a, Table 2's numbers are Table 8's cells of other combinations than its labels say
    assert defsentplus_protocol.paper_combination("bert-large-uncased", "a")[:2] == ("cls", "mean")   # (CLS, AMP): 79.40
    assert defsentplus_protocol.paper_combination("roberta-base", "a")[:2] == ("mean", "cls")         # (Mean, AC): 78.44
    assert defsentplus_protocol.paper_combination("roberta-large", "a")[:2] == ("mean", "cls")        # (Mean, AC): 79.81
    assert defsentplus_protocol.paper_combination("bert-base-uncased", "a")[:2] == ("cls", "mean")    # (CLS, AMP): 77.88
    assert defsentplus_protocol.paper_combination("bert-large-uncased", "b")[:2] == ("mean", "cls")   # b: the label (no Table 8)
    assert [paper_defsentplus.pst_combinations(m) for m in ("BERT-large", "RoBERTa-large")] == [
        [("cls", "mean")] * 3, [("mean", "cls")] * 3]   # no model changes combination between steps
    assert defsentplus_protocol.paper_combination("roberta-base", "c")[:2] == ("cls", "cls")          # (CLS, AC)
    pooling, entry, why = defsentplus_protocol.paper_combination("my/model", "a")
    assert (pooling, entry) == ("cls", "mean") and "no 1st Training row" in why
    assert defsentplus_tables.SENTEVAL_POOLING["bert-base-uncased"] == "mean"        # Table 7, BERT-base(ICA)
    assert defsentplus_tables.SENTEVAL_POOLING["roberta-large"] == "prompt"
    assert defsentplus_protocol.PAPER_LRS["princeton-nlp/unsup-simcse-bert-large-uncased"] == (1e-5,)


def test_table4_rows_of_each_model():
    final = {m: aggregate.paper_row(paper_defsentplus.TABLE4, m, "DefSent+", "3rd-", exclude=("simcse", "snscse"))
             for m in aggregate.PAPER_MODEL_LABELS}
    assert paper_defsentplus.TABLE4[final["roberta-large"]][-1] == 89.61
    assert paper_defsentplus.TABLE4[final["bert-base-uncased"]][-1] == 86.33
    assert paper_defsentplus.TABLE4[aggregate.paper_row(paper_defsentplus.TABLE4, "roberta-base", "SimCSE")][-1] == 86.20


def test_gausscse_rows_of_one_model_and_the_baselines():
    rows = paper_gausscse.rows_for(paper_gausscse.TABLE3, "RoBERTa-large")
    assert list(rows) == ["SimCSE (BERT-base)", "ent", "ent+con", "ent+rev", "ent+con+rev"]
    assert rows["ent+con"][0] == 78.05 and rows["ent+con+rev"][-1] == 82.41
    assert paper_gausscse.rows_for(paper_gausscse.TABLE2, "BERT-large")["ent+rev"] == [97.66, 92.76, 88.03, 92.81]
    assert list(paper_gausscse.rows_for(paper_gausscse.TABLE2, None)) == ["Length-baseline"]


def test_table1_shows_the_averages_the_paper_prints_and_ours_computed():
    """Issue 71: a paper row's Table 1 average is the printed one (79.68, not the 79.69 its three
    accuracies give), blank where Table 1 prints none; ours is computed."""
    from defsent_lite.paper import results
    from defsent_lite.repro import gausscse_tables
    ours = pd.DataFrame([[70.0, 1.0, 60.0, 1.0, 65.0, 1.0]], columns=paper_gausscse.NLI_COLS, index=["ent"])
    whole3 = results.whole_paper_table(paper_gausscse.TABLE3, paper_gausscse.NLI_COLS, ours,
                                       {"ent": ("BERT-base", "ent")})
    avg = gausscse_tables.table1(whole3)["avg"]
    assert avg[("RoBERTa-large, ent+con", "paper")] == 79.68 and avg[("SimCSE (BERT-base)", "paper")] == 79.75
    assert pd.isna(avg[("BERT-large, ent", "paper")]) and avg[("BERT-base, ent", "ours: ent")] == 65.0


def test_data_augmented_rows_stand_beside_table3_and_table6():
    from defsent_lite.paper import results
    from defsent_lite.repro import defsentplus_protocol
    from test_aggregate import fake_step
    rel = defsentplus_protocol.release("princeton-nlp/unsup-simcse-roberta-large")
    assert (rel.table3_key, rel.steps, rel.lrs) == ("SIMCSE RoBERTa-large", 2, (3e-5, 2e-5))
    with pytest.raises(ValueError, match="no DefSent\\+ rows for checkpoint"):
        defsentplus_protocol.release("bert-base-uncased")
    with pytest.raises(ValueError, match="PAPER_LABEL 'sncse-BERT-base' is not"):
        defsentplus_protocol.release("/models/sncse", "sncse-BERT-base")
    # Table 4's name gives the final step's combination, Sec. 4.2's text the 1st where it differs
    sncse = defsentplus_protocol.release("/models/sncse-roberta-large", "snscse-RoBERTa-large")
    assert sncse.combinations == (("cls", "cls"), ("mean", "cls")) and sncse.lrs == (1e-6, 1e-6)
    assert sncse.table4_keys == ("SNCSE RoBERTa-large", "DefSent+ snscse-RoBERTa-large 2nd-(Mean,AC)-a")
    syn = defsentplus_protocol.release("sjtu-lit/SynCSE-partial-RoBERTa-base")   # Table 5 drops "-partial", Table 7 writes "snscse"
    assert (syn.table3_key, syn.lrs, syn.senteval_pooling) == ("SynCSE (partial) RoBERTa-base", (1e-6,), "prompt")
    assert defsentplus_protocol.release("/models/syncse", "synscse-partial-RoBERTa-base") == syn._replace(checkpoint="/models/syncse")
    assert defsentplus_protocol.PAPER_LRS["sjtu-lit/SynCSE-partial-RoBERTa-large"] == (2e-5, 5e-6)
    for label in defsentplus_protocol.release_labels():   # Table 4's step agrees with the length of Table 5's row
        r = defsentplus_protocol.release("x", label)
        assert r.table4_keys[1].split()[2][:3] == ["1st", "2nd"][r.steps - 1] and len(r.combinations) == r.steps
    steps = [dict(fake_step({s: {"cls": 70.0 + s, "mean": 60.0} for s in range(2)}), step=k) for k in (1, 2)]
    untrained = {"cls": {c: 50.0 for c in results.STS_COLS}, "mean": {c: 55.0 for c in results.STS_COLS}}
    ours, poolings, counts = defsentplus_protocol.release_rows(untrained, steps)
    assert poolings == {"checkpoint": "mean", "DefSent+ 1st Training": "cls", "DefSent+ 2nd Training": "cls"}
    assert counts == {"DefSent+ 1st Training": 2, "DefSent+ 2nd Training": 2} and ours.loc["checkpoint", "avg"] == 55.0
    table = defsentplus_protocol.beside_paper(ours, rel)
    assert table.loc[("DefSent+ 2nd Training", "diff"), "avg"] == pytest.approx(70.5 - 82.04)
    assert table.loc[("checkpoint", "paper"), "avg"] == 78.90
    assert table.loc[("DefSent+ 1st Training", "paper")].isna().all()
    context = defsentplus_protocol.beside_paper(ours, rel, compare=False)   # a stand-in: the paper's rows, no diff
    assert context.loc[("checkpoint", "paper (context)"), "avg"] == 78.90
    assert "diff" not in context.index.get_level_values("source")
    assert rel.table6_key in defsentplus_protocol.paper_rows_text(rel)
    transfer = pd.DataFrame({c: [80.0, 86.0] for c in results.TRANSFER_COLS}, index=["checkpoint", "DefSent+"])
    t4 = defsentplus_protocol.transfer_beside_paper(transfer, rel)
    assert t4.loc[("checkpoint", "diff"), "avg"] == pytest.approx(80.0 - 88.44)
    assert t4.loc[("DefSent+", "paper"), "MR"] == 86.58


def test_defsent_table5_beside_the_papers_rates_and_spread():
    seeds = aggregate.table_over_seeds({"max": [[.30, .20, .30, .50], [.32, .22, .34, .52]]},
                                       ["mrr", "top1", "top3", "top10"], "test")
    table = defsent_protocol.table5({"max": 2.0 ** 3 * 1e-6}, seeds, "roberta-base")
    assert table.loc["Max", "lr (paper)"] == "2^2e-6" and table.loc["Max", "lr (ours)"] == "2^3e-6"
    assert table.loc["Max", "mrr (paper)"] == "0.3072 ± 0.0037"
    assert table.loc["Max", "top10"].startswith("0.5100 ± ")
    assert defsent_protocol.table5({"max": 3.0}, seeds, "my/model").loc["Max", "mrr (paper)"] == ""


def test_a_checkpoints_table4_row_is_the_better_of_its_captions_poolings(monkeypatch):
    """Issue 45, item 4: Table 4's caption scores a released checkpoint under its own pooling or,
    where the average is higher, Prompt (SimCSE, SynCSE) or CLS or Mean (SNCSE, own Prompt); our
    final encoder stays under Table 7's pooling."""
    from defsent_lite.paper import results
    from defsent_lite.evaluation import senteval
    from defsent_lite.repro import defsentplus_protocol
    assert defsentplus_protocol.release("princeton-nlp/unsup-simcse-bert-base-uncased").checkpoint_poolings == ("cls", "prompt")
    assert defsentplus_protocol.release("sjtu-lit/SynCSE-partial-RoBERTa-base").checkpoint_poolings == ("cls", "prompt")
    assert defsentplus_protocol.release("/m", "snscse-BERT-base").checkpoint_poolings == ("prompt", "cls", "mean")
    avg = {"cls": 80.0, "prompt": 83.0, "mean": 81.0}
    asked = []
    monkeypatch.setattr(senteval, "untrained_transfer", lambda model, poolings, *a, **k: asked.append(poolings) or
                        {p: {c: avg[p] for c in results.TRANSFER_COLS} for p in poolings})
    monkeypatch.setattr(senteval, "encoder_transfer", lambda path, pooling, *a, **k: {c: 85.0 for c in results.TRANSFER_COLS})
    scale = dict(encode_batch_size=8, transfer_kfold=2, transfer_inner_search=False, transfer_max_examples=9,
                 transfer_max_eval=9, transfer_classifier="batched")
    table = senteval.transfer_before_after("ckpt", "ours", "cls", scale, names=("checkpoint", "DefSent+"),
                                         untrained_poolings=("cls", "prompt"))
    assert asked == [["cls", "prompt"]] and table.attrs["untrained_pooling"] == "prompt"
    assert table.loc["checkpoint", "avg"] == 83.0 and table.loc["DefSent+", "avg"] == 85.0
    alone = senteval.transfer_before_after("ckpt", "ours", "cls", scale)   # no candidates: its pooling
    assert alone.attrs["untrained_pooling"] == "cls" and alone.loc["untrained", "avg"] == 80.0
