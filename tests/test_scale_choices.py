"""The choices a scale makes for a notebook live in named functions (the notebooks hold no
branch on the scale): each gives the protocol's answer under the paper's protocol and the
smoke scale's otherwise."""
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.repro import defsentplus_protocol, defsent_scores, gausscse_protocol
from defsent_lite.evaluation import senteval
from defsent_lite.runtime import config

SIMCSE = "princeton-nlp/unsup-simcse-bert-base-uncased"


def test_senteval_poolings_one_at_smoke_all_three_under_the_protocol():
    assert defsent_scores.senteval_poolings(config.scale("smoke"), "max") == ["max"]
    for name in ("paper", "colab", "cpu"):
        assert defsent_scores.senteval_poolings(config.scale(name), "max") == ["cls", "mean", "max"]


def test_the_data_augmented_notebook_trains_the_checkpoint_only_under_the_protocol():
    assert defsentplus_protocol.model_to_train("paper", SIMCSE) == SIMCSE
    assert defsentplus_protocol.model_to_train("colab", SIMCSE) == SIMCSE
    assert defsentplus_protocol.model_to_train("smoke", SIMCSE) == config.OFFLINE_MODEL   # a contrastive stand-in
    assert defsentplus_protocol.model_to_train("smoke", SIMCSE, "roberta-base") == "roberta-base"


def test_the_data_augmented_pst_takes_table_5_rates_only_under_the_protocol():
    release = defsentplus_protocol.release(SIMCSE)
    paper = defsentplus_protocol.release_pst_config(config.scale("paper"), SIMCSE, release)
    assert paper["lrs"] == list(release.lrs) == list(paper_defsentplus.table5_rates(release.label))
    assert (paper["pooling"], paper["entry_pooling"]) == release.combinations[0]
    assert paper["later_combinations"] == list(release.combinations[1:]) and paper["ica"] is False
    smoke = config.scale("smoke")
    stand_in = defsentplus_protocol.release_pst_config(smoke, "offline", release, steps=3)
    assert stand_in["lrs"][:len(smoke["dsp_lrs"])] == list(smoke["dsp_lrs"])[:3] and len(stand_in["lrs"]) == 3


def test_the_cosine_baseline_is_simcse_only_under_the_protocol():
    assert gausscse_protocol.baseline_encoder(config.scale("paper"), "bert-base-uncased") == gausscse_protocol.SIMCSE_BASELINE
    assert gausscse_protocol.baseline_encoder(config.scale("smoke"), "offline") == ("offline", "mean")


def test_transfer_text_names_the_scale_s_protocol():
    smoke = config.scale("smoke")
    text = senteval.transfer_text(smoke)
    assert f"max {smoke['transfer_max_examples']} train" in text and f"{smoke['transfer_kfold']}-fold" in text
    assert text != senteval.transfer_text(config.scale("paper"))
