# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-tolerance
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Baselines: the raw encoder's CLS vector and averaged token embeddings
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/defsent-lite/defsent_lite/blob/main/notebooks/01_baselines.ipynb)
#
# DefSent's Tables 3 (STS) and 4 (SentEval) start from two baselines that need no
# training: the last-layer **CLS vector** and the **average of the last-layer token
# embeddings** of BERT-base (rows taken from Sentence-BERT). This notebook computes both
# rows for the model in the parameters cell, with the same scorers every later notebook
# uses.
#
# $$\text{STS} = 100 \cdot \rho_{\text{Spearman}}\big(\cos(u_a, u_b),\ \text{gold}(a, b)\big), \qquad u = \operatorname{pool}(\mathrm{BERT}(s)).$$
#
# * STS: Spearman x100 of cosine similarity, STS12-16 in the "all" setting, STS-B and
#   SICK-R test sets (`sts/raw`).
# * SentEval: logistic regression on frozen embeddings (SentEval's protocols with
#   scikit-learn's objective, every fold and C of a task fitted at once by `senteval.fit_many`;
#   at paper scale SentEval's Adam-trained torch classifier, batched; see `defsent_lite/evaluation/senteval.py`). The smoke scale uses 100 evenly spaced pairs per STS task, 200 training examples
#   and at most 100 dev/test examples per SentEval task,
#   5 folds and C = 1 instead of the inner search over C.
#
# **What to expect.** At the `smoke` scale the model is mini-BERT, the repository's own raw
# masked LM (`docs/mini_bert.md`: BERT's vocabulary, 4 layers of 128, pre-trained here on 1.9M
# tokens), a stand-in for raw BERT that is far smaller and far less trained. Its averaged token
# vectors sit below raw BERT's on STS (41 against 55), its CLS vector above (41 against 29: raw
# BERT's CLS is an especially poor similarity vector); on SentEval both sit far below the
# paper's rows: the smoke classifier sees 200 training examples per task with C = 1, and the
# vectors have 128 dimensions, not 768. The paper's rows are context here (another model): no
# difference is taken. Set `SCALE = "paper"` on a GPU to compute the paper's rows with
# bert-base-uncased, beside which the differences come back.

# %% tags=["parameters"]
import os

SCALE = os.environ.get("DEFSENT_SCALE", "smoke")
DATA_ROOT = os.environ.get("DEFSENT_DATA")  # None: found (data/, else ../shared/data)
MODEL = None  # None: the scale's (smoke: mini-BERT, paper: bert-base-uncased)
DRIVE = None  # Colab: data, cache, results on Google Drive (None: at every scale but smoke)

# %%
# Colab only: install the package from the branch the badge opened this notebook from, and fetch
# what this notebook reads at its scale into DRIVE's choice of home (a parameter above).
import subprocess, sys
if "google.colab" in sys.modules:
    package = "defsent_lite[offline] @ git+https://github.com/defsent-lite/defsent_lite@main"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
    from defsent_lite.repro import colab
    colab.setup("01", SCALE, DATA_ROOT, drive=DRIVE)

# %%
from defsent_lite.runtime import config, models
from defsent_lite.paper import aggregate, plots, results
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.evaluation import senteval, sts
from defsent_lite.repro import eval_sizes, plans, preflight

# the scale's settings and model; every file and model it needs, checked before any work
scale, MODEL = preflight.start("01", SCALE, DATA_ROOT, MODEL)
config.set_seed(scale["seeds"][0])
model, tokenizer = models.load(MODEL)
print("scale:", scale["name"], "| model:", MODEL)
print(models.describe(model).replace(" on cuda", "").replace(" on cpu", ""))


POOLINGS = ["cls", "mean"]
sentences = (eval_sizes.sts_sentences(DATA_ROOT, scale["sts_max_pairs"])
             + eval_sizes.transfer_sentences(DATA_ROOT, senteval.transfer_settings(scale)))
what = "untrained CLS and mean (one pass): STS and SentEval"
# the plan and its time estimate first (printed at the protocol scales)
plans.print_plan(scale, lambda: eval_sizes.encoding_plan(what, MODEL, sentences, DATA_ROOT))
batch_size = scale["encode_batch_size"]
sts_rows = sts.untrained_sts(MODEL, POOLINGS, scale["sts_max_pairs"], DATA_ROOT, batch_size)
transfer_rows = senteval.untrained_transfer(MODEL, POOLINGS, scale, DATA_ROOT, batch_size)

# %% [markdown]
# ## DefSent Table 3 rows (STS)

# %%
t3 = aggregate.baselines(sts_rows, paper_defsent.TABLE3, paper_defsent.UNTRAINED_ROWS,
                         results.STS_COLS, MODEL, scale)
print(t3.note)      # whose rows the paper's are (bert-base's only); compared only for its own model
table3 = t3.table
table3

# %% [markdown]
# ## DefSent Table 4 rows (SentEval)

# %%
table4 = aggregate.baselines(transfer_rows, paper_defsent.TABLE4, paper_defsent.UNTRAINED_ROWS,
                             results.TRANSFER_COLS, MODEL, scale).table
table4

# %%
meta = dict(model=MODEL, scale=scale["name"], seeds=scale["seeds"][0],
            data=f"STS raw, max {scale['sts_max_pairs']} pairs/task; "
                 f"{senteval.transfer_text(scale)}")
print("saved", results.save_csv(table3, "01_defsent_table3_baselines.csv", **meta))
print("saved", results.save_csv(table4, "01_defsent_table4_baselines.csv", **meta))
plots.save_ours_minus_paper(table3, results.STS_COLS, "DefSent Table 3 rows", MODEL, t3.reference,
                            "01_defsent_table3_baselines.png", unit="Spearman x100", **meta)
