"""Issue 33: a scale that fits one Colab session per notebook - the papers' models and data at the
rates the official scripts pin, one seed, the batched SentEval classifier - and its structure at
rehearsal size (stand-ins, capped) so that CI runs it."""
from defsent_lite.runtime import config
import colab_plans
from defsent_lite.repro import defsent_protocol


def test_the_colab_scale_is_the_paper_protocol_with_one_seed_and_the_pinned_rates():
    paper, colab, small = config.scale("paper"), config.scale("colab"), config.scale("colab_rehearsal")
    assert set(colab) == set(paper) == set(small)
    assert colab["paper_protocol"] and colab["model"] == paper["model"] and colab["defsent_lr_xs"] == defsent_protocol.PINNED
    assert colab["seeds"] == colab["gauss_seeds"] == [0] and colab["transfer_classifier"] == "batched"
    assert small["standins"] and not colab["standins"] and small["seeds"] == [0]


def test_each_notebook_of_the_colab_scale_fits_one_hour_on_a_t4_by_its_flops():
    estimates = colab_plans.colab_session_estimates()
    assert [p.what[:11] for p in estimates] == ["notebook 10", "notebook 21", "notebook 30", "notebook 33"]
    for p in estimates:
        assert p.params > 1e8 and p.train_tokens > 0 and p.encoded_tokens > 0
        assert 0 < p.t4_seconds <= 3600, (p.what, p.flops_line())
    ten = estimates[0]   # 3 poolings x 97,759 training definitions at batch 16
    assert ten.trainings == 3 and ten.steps == 3 * 6110


def test_a_t4_estimate_is_never_below_its_steps_at_the_host_bound_floor():
    """Issue 44, point 4: at batch 16 a step costs what the host needs, on any GPU: each plan's T4
    time is at least its steps x the floor (DefSent's 43 ms, GaussCSE's 50 ms, measured on an
    H100); notebook 10, FLOP-bound at 5 min, is step-bound: 18,330 x 43 ms = 13 min at least."""
    from defsent_lite.repro import plans
    estimates = colab_plans.colab_session_estimates()
    assert [p.step_floor_s for p in estimates] == [plans.STEP_FLOOR_S[k] for k in ("defsent", "defsent", "gausscse", "gausscse")]
    for p in estimates:
        assert p.t4_seconds >= p.steps * p.step_floor_s > 0 and "ms a step at least" in p.flops_line()
    no_floor = estimates[0]._replace(step_floor_s=0.0)
    assert no_floor.t4_seconds < 6 * 60 < 13 * 60 < estimates[0].t4_seconds


def _one_seed_beside(ours_numbers, runs=1):
    """BERT-base Mean of DefSent's Table 8 beside `ours_numbers`, with its stds."""
    import pandas as pd
    from defsent_lite.paper import defsent as paper_defsent
    from defsent_lite.paper import results
    key = ("BERT-base", "Mean")
    paper = results.paper_table({key: paper_defsent.TABLE8[key]}, results.STS_COLS)
    std = results.paper_table({key: paper_defsent.TABLE8_STD[key]}, results.STS_COLS)
    ours = pd.DataFrame([ours_numbers], index=["ours"], columns=results.STS_COLS)
    return results.side_by_side(paper, ours, {"DefSent (mean)": (key, "ours")}, std=std, runs=runs)


def test_one_seed_inside_the_papers_spread_and_one_cell_outside_it():
    """At the colab scale ours is one seed: z = (ours - paper) / std, inside when |z| <= 2."""
    from defsent_lite.paper import defsent as paper_defsent
    from defsent_lite.paper import results
    mean, std = paper_defsent.TABLE8[("BERT-base", "Mean")], paper_defsent.TABLE8_STD[("BERT-base", "Mean")]
    near = [m + 1.5 * s for m, s in zip(mean, std)]
    table = _one_seed_beside(near)
    assert list(table.loc[("DefSent (mean)", "paper std")]) == std
    assert all(abs(z - 1.5) < 0.02 for z in table.loc[("DefSent (mean)", "z")])
    assert results.spread_verdict(table) == "DefSent (mean): inside the paper's mean +- 2 std in 8 of 8"
    far = list(near)
    far[0] = mean[0] - 3 * std[0]   # STS12 three stds low
    verdict = results.spread_verdict(_one_seed_beside(far))
    assert verdict.startswith("DefSent (mean): inside the paper's mean +- 2 std in 7 of 8") and "STS12 z = -3.0" in verdict


def test_a_mean_of_several_seeds_is_held_to_the_spread_of_a_mean():
    """Ten seeds averaged: the same distance is sqrt(10) times as many of the mean's stds."""
    from defsent_lite.paper import defsent as paper_defsent
    mean, std = paper_defsent.TABLE8[("BERT-base", "Mean")], paper_defsent.TABLE8_STD[("BERT-base", "Mean")]
    z = _one_seed_beside([m + s for m, s in zip(mean, std)], runs=10).loc[("DefSent (mean)", "z")]
    assert all(abs(v - 10 ** 0.5) < 0.03 for v in z)


def test_no_spread_is_judged_without_a_published_std_or_beside_a_stand_in():
    import pandas as pd
    from defsent_lite.paper import gausscse as paper_gausscse
    from defsent_lite.paper import results
    paper = results.paper_table(paper_gausscse.rows_for(paper_gausscse.TABLE3, "BERT-base"), paper_gausscse.NLI_COLS)
    ours = paper.loc[["ent"]].rename(index={"ent": "ours"})
    for compare in (True, False):
        table = results.side_by_side(paper, ours, {"ent": ("ent", "ours")}, compare=compare)
        assert not {"z", "paper std"} & set(table.index.get_level_values("source"))
        assert results.spread_verdict(table).startswith("inside the paper's spread: not judged")
    mean = pd.DataFrame([[1.0]], index=["p"], columns=["a"])
    beside_standin = results.side_by_side(mean, mean, {"x": ("p", "p")}, compare=False, std=mean)
    assert "z" not in set(beside_standin.index.get_level_values("source"))
