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


def t4_plan(
    what,
    trainings,
    steps,
    encoded,
    params,
    train_tokens,
    encoded_tokens,
    autocast,
    floor,
    encode_autocast=False,
):
    """A plan counted in FLOPs at a T4's throughput (no timing measured: step_s and batch_s 0)."""
    return plans.Plan(
        what,
        trainings,
        steps,
        encoded,
        0.0,
        0.0,
        64,
        "T4",
        params,
        train_tokens,
        encoded_tokens,
        autocast,
        encode_autocast,
        plans.STEP_FLOOR_S[floor],
    )


def colab_session_estimates(data_dir=None):
    """Plans of the main trainings of notebooks 10, 21, 30 and 33 at the colab scale with BERT-base
    and the papers' full data, built from the datasets' published sizes (DefSent Table 1: 97,759
    training definitions; DefSent+ Table 1: 331,472 definitions in a; SimCSE: 275,601 NLI
    triplets) and token lengths measured on the offline data with BERT's vocabulary, for their
    FLOPs at a T4's throughput (no model is loaded: BERT-base's parameters are counted on the
    meta device)."""
    S = config.scale("colab")
    tok = models.bert_vocabulary()
    with torch.device("meta"):
        mlm = plans.parameters(BertForMaskedLM(BertConfig()))
        encoder = plans.parameters(BertModel(BertConfig()))
    definitions = [d for _, d in dictionary_readers.oxford_pairs(data_dir)[0]]
    plain = plans.row_tokens(tok, definitions)
    sentence = eval_sizes.eval_sentence_tokens(tok, data_dir)
    n_train = paper_defsent.TABLE1[("All", "Train")][1]
    n_eval = paper_defsent.TABLE1[("All", "Dev")][1] + paper_defsent.TABLE1[("All", "Test")][1]
    k = 3  # poolings
    n_a = paper_defsentplus.TABLE1["a (Oxford + WordNet)"][0]
    steps, runs = 3, 4  # 1st-3rd Training, one seed; the 3rd also against the ICA space
    sts = eval_sizes.sts_sentences(data_dir) * len(S["dsp_inference_poolings"])
    return [
        t4_plan(
            "notebook 10: DefSent, 3 poolings x 1 pinned rate x 1 seed",
            k,
            k * math.ceil(n_train / 16),
            k * n_eval,
            mlm,
            k * n_train * plans.row_tokens(tok, definitions, 16),
            k * n_eval * plain,
            S["train_autocast"],
            "defsent",
        ),
        t4_plan(
            "notebook 21: DefSent+ PST on a, 3 steps x 1 seed + ICA",
            runs,
            runs * math.ceil(n_a / 32),
            steps * n_a + runs * sts,
            encoder,
            runs * n_a * plans.row_tokens(tok, definitions, 32),
            steps * n_a * plain + runs * sts * sentence,
            S["train_autocast"],
            "defsent",
        ),
    ] + gausscse_estimates(S, tok, encoder, sentence, data_dir)


def gausscse_estimates(S, tok, encoder, sentence, data_dir=None):
    """colab_session_estimates' plans of notebooks 30 and 33 (GaussCSE's four loss settings, the
    grid), from SimCSE's 275,601 NLI triplets capped by the colab scale."""
    triplets = [s for t in nli_readers.training_triplets(data_dir) for s in t]
    n_nli = min(sources.by_name("nli_for_simcse")["rows"], S["gauss_train_max"] or math.inf)
    per_triplet = 3 * plans.row_tokens(tok, triplets, 48)  # a batch of 16 pads its 48 sentences
    test_sentences = 2 * sum(
        len(nli_readers.load_nli(name, data_dir))
        for name in gausscse_protocol.NLI_TEST_SETS.values()
    )
    gauss = encoder + 2 * 768 * 769  # the encoder and its mean and variance heads
    steps = n_nli // 16
    encoded = 2 * S["gauss_dev_max"] * (steps // 100 + 2) + test_sentences  # SNLI dev / 100 steps
    n_grid, rates, sizes = S["gauss_grid_train_max"], 3, S["gauss_grid_batch_sizes"]
    cells = rates * len(sizes)
    grid_encoded = rates * sum(2 * S["gauss_dev_max"] * (n_grid // b // 100 + 2) for b in sizes)
    return [
        t4_plan(
            "notebook 30: GaussCSE, 4 loss settings x 1 seed at batch 16",
            4,
            4 * steps,
            4 * encoded,
            gauss,
            4 * n_nli * per_triplet,
            4 * encoded * sentence,
            True,
            "gausscse",
            True,
        ),
        t4_plan(
            f"notebook 33: GaussCSE grid, {len(sizes)} batch sizes x {rates} rates, {n_grid:,} triplets",
            cells,
            rates * sum(n_grid // b for b in sizes),
            grid_encoded,
            gauss,
            cells * n_grid * per_triplet,
            grid_encoded * sentence,
            True,
            "gausscse",
            True,
        ),
    ]


if __name__ == "__main__":
    for plan in colab_session_estimates():
        print(plan.what, "|", plan.flops_line())
