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
# # 12 · DefSent on SentEval transfer tasks (Tables 4 and 9)
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/defsent-lite/defsent_lite/blob/main/notebooks/12_defsent_senteval.ipynb)
#
# Frozen DefSent embeddings are features for a logistic regression on seven
# classification tasks (MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC), following SentEval's
# protocols (see `defsent_lite/evaluation/senteval.py`). At paper scale the classifier is SentEval's
# Adam-trained torch logistic regression, which the paper used with Sentence-BERT's settings
# (`"senteval_torch"`: every fold and weight decay of a task in one batch); the smoke and cpu
# scales use scikit-learn's logistic-regression objective, every fold and C of a task fitted in
# one batch (`"batched"`). Accuracy in %. DefSent's SentEval rows are the mean (± std) of the
# first three seeds, as its Table 9 says ("three evaluations with different random seeds";
# `defsent_scores.SENTEVAL_SEEDS`), while its word-prediction and STS tables average ten.
#
# $$p(y \mid s) = \operatorname{softmax}(W u_s + b)_y, \qquad u_s \text{ frozen (`evaluation/senteval.py`)}.$$
#
# **Smoke scale**: one pooling, that of the paper's DefSent row for the model (BERT-base: CLS; a
# smoke run's dev-MRR margins between poolings are within its seed spread) (the paper's Table 4 also
# shows one pooling per model; Table 9 all three, run with `SCALE = "paper"`), 200 training and at
# most 100 dev/test examples per task, 5 folds, C = 1. The untrained row (the classifier is
# deterministic on fixed vectors) is compared as a score; the DefSent rows are a **pipeline check**
# at this size (finite, the right rows): the 50-step run moves the average by 1.4 points here (64.86
# -> 66.21) and single tasks by up to 10 (SST-2, on 100 test sentences), and its spread over seeds
# and machines is not measured. The paper's rows are context (another model). At paper
# scale, expect DefSent-BERT-base about 1 point above the raw BERT baselines, as in the paper.

# %% tags=["parameters"]
import os

SCALE = os.environ.get("DEFSENT_SCALE", "smoke")
DATA_ROOT = os.environ.get("DEFSENT_DATA")  # None: found (data/, else ../shared/data)
MODEL = None
POOLINGS = None  # None: smoke the pooling of Table 4's row, else all three
VARIANT = "official"  # the released code (default); "paper": the text
# (defsent_protocol.differences())
DRIVE = None  # Colab: data, cache, results on Google Drive (None: at every scale but smoke)

# %%
# Colab only: install the package from the branch the badge opened this notebook from, and fetch
# what this notebook reads at its scale into DRIVE's choice of home (a parameter above).
import subprocess, sys
if "google.colab" in sys.modules:
    package = "defsent_lite[offline] @ git+https://github.com/defsent-lite/defsent_lite@main"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
    from defsent_lite.repro import colab
    colab.setup("12", SCALE, DATA_ROOT, drive=DRIVE)

# %%
from defsent_lite.paper import aggregate, plots, results
from defsent_lite.evaluation import senteval
from defsent_lite.repro import defsent_protocol, defsent_scores, preflight

# the scale's settings and model; every file and model it needs, checked before any work
scale, MODEL = preflight.start("12", SCALE, DATA_ROOT, MODEL)
# the plan and its time estimate first (printed at the protocol scales), then DefSent trained per
# pooling and seed (or found where notebook 10 left it), SentEval scored untrained and trained
scored = defsent_scores.senteval(scale, MODEL, POOLINGS, DATA_ROOT, VARIANT)
print("scale:", scale["name"], "| variant:", VARIANT, "| model:", MODEL,
      "| head:", scored.head_kind)
print("poolings scored:", scored.poolings, f"| Table 4's pooling: {scored.reported} ({scored.why})")
t4 = defsent_scores.table4(scored.untrained, scored.trained, MODEL, scale)
t4.ours.round(2)

# %% [markdown]
# Where the released code and the paper's text differ (`VARIANT` picks; notebook 10 says more):

# %%
aggregate.whole(defsent_protocol.differences())

# %% [markdown]
# ## Table 9 (each pooling) and Table 4 (the paper's DefSent row for the model), beside ours
# Table 9's rows are the model's own pooling; Table 4's DefSent row is the paper's best
# pooling (where it is Table 9's row of that pooling, as BERT-base's CLS, it is shown once); the
# raw-BERT baselines of Table 4 stand beside ours only for BERT-base and its stand-in.
# Beside the paper's own model under its protocol (paper and colab scales) each row also gets the
# paper's std over its seeds and z = (ours - paper) / (std / sqrt(our runs)): one seed of ours (colab
# scale) lies inside the paper's spread when |z| <= 2; the line above the table says which do not.

# %%
print(t4.note)      # whose rows the paper's are; compared only for its own model and protocol
print(t4.verdict)   # which of ours lie outside the paper's spread
table4 = t4.table
table4

# %% [markdown]
# The paper's whole Tables 9 and 4, every model's rows, as context: each of ours sits below the
# row it stands beside.

# %%
defsent_scores.whole_table9(t4).round(2)

# %%
defsent_scores.whole_table4(t4).round(2)

# %%
aggregate.mean_pm_std(t4.seeds)

# %%
meta = dict(model=MODEL, head=scored.head_kind, scale=scale["name"], seeds=scale["seeds"],
            data=f"{scored.data}; {senteval.transfer_text(scale)}",
            runs=t4.seeds.n.to_dict())
print("saved", results.save_csv(table4, "12_defsent_table4.csv", **meta))
plots.save_ours_minus_paper(table4, results.TRANSFER_COLS, "DefSent Tables 4 and 9",
                            MODEL, t4.reference, "12_defsent_table4.png", unit="accuracy %", **meta)
