"""Issue 33: a scale that fits one Colab session per notebook - the papers' models and data at the
rates the official scripts pin, one seed, the batched SentEval classifier - and its structure at
rehearsal size (stand-ins, capped) so that CI runs it."""
from defsent_lite import budget, config, defsent


def test_the_colab_scale_is_the_paper_protocol_with_one_seed_and_the_pinned_rates():
    paper, colab, small = config.scale("paper"), config.scale("colab"), config.scale("colab_rehearsal")
    assert set(colab) == set(paper) == set(small)
    assert colab["paper_protocol"] and colab["model"] == paper["model"] and colab["defsent_lr_xs"] == defsent.PINNED
    assert colab["seeds"] == colab["gauss_seeds"] == [0] and colab["transfer_classifier"] == "batched"
    assert small["standins"] and not colab["standins"] and small["seeds"] == [0]


def test_each_notebook_of_the_colab_scale_fits_one_hour_on_a_t4_by_its_flops():
    plans = budget.colab_session_estimates()
    assert [p.what[:11] for p in plans] == ["notebook 10", "notebook 21", "notebook 30", "notebook 33"]
    for p in plans:
        assert p.params > 1e8 and p.train_tokens > 0 and p.encoded_tokens > 0
        assert 0 < p.t4_seconds <= 3600, (p.what, p.flops_line())
    ten = plans[0]   # 3 poolings x 97,759 training definitions at batch 16
    assert ten.trainings == 3 and ten.steps == 3 * 6110
