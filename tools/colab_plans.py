"""One Colab session per notebook: the plans of the main trainings of notebooks 10, 21, 30 and 33 at
the colab scale with the papers' models and full data, counted in FLOPs at a T4's throughput
(plans.T4_SOURCE), each step no faster than a host-bound step measured on an H100
(plans.STEP_FLOOR_S); docs/colab_session.md shows them. Repository tooling, never imported by
the package:

    python tools/colab_plans.py        # print the estimates docs/colab_session.md quotes
"""

import math

import torch
from transformers import BertConfig, BertForMaskedLM, BertModel

from defsent_lite.runtime import config, models
from defsent_lite.data import dictionary_readers, nli_readers, sources
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.repro import eval_sizes, gausscse_protocol, plans


def colab_session_estimates(data_dir=None):
    """Plans of the main trainings of notebooks 10, 21, 30 and 33 at the colab scale with BERT-base
    and the papers' full data, built from the datasets' published sizes (DefSent Table 1: 97,759
    training definitions; DefSent+ Table 1: 331,472 definitions in a; SimCSE: 275,601 NLI
    triplets) and token lengths measured on the offline data with BERT's vocabulary, for their
    FLOPs at a T4's throughput (no model is loaded: BERT-base's parameters are counted on the
    meta device). Timings are not measured here: step_s and batch_s are 0."""
    S = config.scale("colab")
    tok = models.bert_vocabulary()
    with torch.device("meta"):
        mlm, encoder = (
            plans.parameters(BertForMaskedLM(BertConfig())),
            plans.parameters(BertModel(BertConfig())),
        )
    definitions = [d for _, d in dictionary_readers.oxford_pairs(data_dir)[0]]
    padded_16, padded_32, plain = (
        plans.row_tokens(tok, definitions, 16),
        plans.row_tokens(tok, definitions, 32),
        plans.row_tokens(tok, definitions),
    )
    sentence = eval_sizes.eval_sentence_tokens(tok, data_dir)
    n_train = paper_defsent.TABLE1[("All", "Train")][1]
    n_eval = paper_defsent.TABLE1[("All", "Dev")][1] + paper_defsent.TABLE1[("All", "Test")][1]
    poolings = 3
    estimates = [
        plans.Plan(
            "notebook 10: DefSent, 3 poolings x 1 pinned rate x 1 seed",
            poolings,
            poolings * math.ceil(n_train / 16),
            poolings * n_eval,
            0.0,
            0.0,
            64,
            "T4",
            mlm,
            poolings * n_train * padded_16,
            poolings * n_eval * plain,
            S["train_autocast"],
            step_floor_s=plans.STEP_FLOOR_S["defsent"],
        )
    ]
    n_a = paper_defsentplus.TABLE1["a (Oxford + WordNet)"][0]
    steps, trainings = 3, 4  # 1st-3rd Training, one seed; the 3rd also against the ICA space
    sts = eval_sizes.sts_sentences(data_dir) * len(S["dsp_inference_poolings"])
    estimates.append(
        plans.Plan(
            "notebook 21: DefSent+ PST on a, 3 steps x 1 seed + ICA",
            trainings,
            trainings * math.ceil(n_a / 32),
            steps * n_a + trainings * sts,
            0.0,
            0.0,
            64,
            "T4",
            encoder,
            trainings * n_a * padded_32,
            steps * n_a * plain + trainings * sts * sentence,
            S["train_autocast"],
            step_floor_s=plans.STEP_FLOOR_S["defsent"],
        )
    )
    triplets = [s for t in nli_readers.training_triplets(data_dir) for s in t]
    n_nli = min(sources.by_name("nli_for_simcse")["rows"], S["gauss_train_max"] or math.inf)
    # a batch of 16 pads its 48 sentences together
    per_triplet = 3 * plans.row_tokens(tok, triplets, 48)
    test_sentences = 2 * sum(
        len(nli_readers.load_nli(name, data_dir))
        for name in gausscse_protocol.NLI_TEST_SETS.values()
    )
    gauss = encoder + 2 * 768 * 769  # the encoder and its mean and variance heads
    steps = n_nli // 16
    # SNLI dev every 100 steps, tests once
    encoded = 2 * S["gauss_dev_max"] * (steps // 100 + 2) + test_sentences
    estimates.append(
        plans.Plan(
            "notebook 30: GaussCSE, 4 loss settings x 1 seed at batch 16",
            4,
            4 * steps,
            4 * encoded,
            0.0,
            0.0,
            64,
            "T4",
            gauss,
            4 * n_nli * per_triplet,
            4 * encoded * sentence,
            True,
            True,
            plans.STEP_FLOOR_S["gausscse"],
        )
    )
    n_grid, rates = S["gauss_grid_train_max"], 3
    steps = rates * sum(n_grid // b for b in S["gauss_grid_batch_sizes"])
    cells = rates * len(S["gauss_grid_batch_sizes"])
    encoded = (
        sum(2 * S["gauss_dev_max"] * (n_grid // b // 100 + 2) for b in S["gauss_grid_batch_sizes"])
        * rates
    )
    estimates.append(
        plans.Plan(
            f"notebook 33: GaussCSE grid, {len(S['gauss_grid_batch_sizes'])} batch sizes x {rates} rates, "
            f"{n_grid:,} triplets",
            cells,
            steps,
            encoded,
            0.0,
            0.0,
            64,
            "T4",
            gauss,
            cells * n_grid * per_triplet,
            encoded * sentence,
            True,
            True,
            plans.STEP_FLOOR_S["gausscse"],
        )
    )
    return estimates


if __name__ == "__main__":
    for plan in colab_session_estimates():
        print(plan.what, "|", plan.flops_line())
