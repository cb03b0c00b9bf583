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
# # 24 · DefSent+ on SentEval (Table 4)
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/defsent-lite/defsent_lite/blob/main/notebooks/24_defsentplus_senteval.ipynb)
#
# Frozen sentence embeddings (last hidden states pooled) as features for logistic regression on
# seven classification tasks, SentEval's protocols with scikit-learn's objective fitted in one batch
# per task (see notebook 12). The paper's point: DefSent+ keeps DefSent's transfer accuracy while
# improving STS. The encoder here is the best one after the last PST step of notebook 21 (shared
# through the run cache), scored with the SentEval pooling the paper's Table 7 gives for that model
# (`defsentplus_tables.SENTEVAL_POOLING`: Mean for BERT-base, CLS for BERT-large, Prompt for RoBERTa),
# or, for a model outside Table 7 (the offline stand-ins), the pooling that scored best on STS.
#
# $$p(y \mid s) = \operatorname{softmax}(W u_s + b)_y, \qquad u_s \text{ frozen (`evaluation/senteval.py`)}.$$
#
# **Smoke scale**: 200 training and at most 100 dev/test examples per task, 5 folds, C = 1. The
# untrained encoder's row (no encoder training; the classifier is deterministic here) is compared as
# a score; the DefSent+ row is a **pipeline check** at this size (its change from the untrained row,
# at most a point a task, is within a run's spread). The paper's rows are context.

# %% tags=["parameters"]
import os

SCALE = os.environ.get("DEFSENT_SCALE", "smoke")
DATA_ROOT = os.environ.get("DEFSENT_DATA")  # None: found (data/, else ../shared/data)
MODEL = None
VARIANT = "official"  # the released code; "paper": the text (defsentplus_protocol.differences())
DATASET = "a"
# (pooling, entry pooling) at every step; None: each step's in Table 2 (as notebook 21)
COMBINATION = None
DRIVE = None  # Colab: data, cache, results on Google Drive (None: at every scale but smoke)

# %%
# Colab only: install the package from the branch the badge opened this notebook from, and fetch
# what this notebook reads at its scale into DRIVE's choice of home (a parameter above).
import subprocess, sys
if "google.colab" in sys.modules:
    package = "defsent_lite[offline] @ git+https://github.com/defsent-lite/defsent_lite@main"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
    from defsent_lite.repro import colab
    colab.setup("24", SCALE, DATA_ROOT, drive=DRIVE)

# %%
import pandas as pd

from defsent_lite.paper import aggregate, plots, results
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.evaluation import senteval
from defsent_lite.repro import defsentplus_protocol, defsentplus_tables, preflight

pd.set_option("display.width", 140)
# the scale's settings and model; every file and model it needs, checked before any work
scale, MODEL = preflight.start("24", SCALE, DATA_ROOT, MODEL)
# the plan and its time estimate first (printed at the protocol scales), then PST (or the steps
# notebook 21 cached) and SentEval of its final encoder beside the untrained one
final = defsentplus_tables.final_senteval(scale, MODEL, DATASET, COMBINATION, DATA_ROOT, VARIANT)
print("scale:", scale["name"], "| variant:", VARIANT, "| model:", MODEL)
print(f"final PST run: step {final.steps[-1]['step']}, space {final.steps[-1]['best'][0]},",
      "pooling", final.pooling, f"({final.why})")
final.ours.round(2)

# %% [markdown]
# Where the released code and the paper's text differ (`VARIANT` picks; notebook 21 says more):

# %%
aggregate.whole(defsentplus_protocol.differences())

# %% [markdown]
# ## Beside the paper's Table 4 (the model's rows, found by model and setting)
# Our final encoder beside the paper's released DefSent+ encoder of the model in the same space
# (its ICA row only when our last step kept the ICA space). A row of NaN is a place where the
# paper has no row: it has no untrained row, and BERT-base's DefSent+ row is its ICA space's, so
# a final encoder that kept the plain space has none beside it. The paper's DefSent and SimCSE
# rows of every model are in its whole table, the next cell.

# %%
t4 = defsentplus_tables.table4(final.ours, final.steps, MODEL, scale)
print(t4.note)   # whose rows the paper's are, and the paper's row in our encoder's space
table4 = t4.table
table4

# %% [markdown]
# The paper's whole Table 4, every model's DefSent, DefSent+ and data-augmented rows, as context:
# ours below the row it stands beside (the paper has no untrained raw-model row).

# %%
results.whole_beside(paper_defsentplus.TABLE4, results.TRANSFER_COLS, final.ours,
                     t4.pairs).round(2)

# %% [markdown]
# The paper's Table 7: the pooling each released encoder uses for STS and for SentEval (ours
# used the one printed at the top).

# %%
pd.DataFrame.from_dict(paper_defsentplus.TABLE7, orient="index", columns=["STS", "SentEval"])

# %%
report, reference = final.report, aggregate.reference_model(MODEL)[0]
meta = dict(model=MODEL, scale=scale["name"], seeds=scale["seeds"], pooling=final.pooling,
            data=f"{report['source']}; {report['entries']} entries; "
                 f"{senteval.transfer_text(scale)}")
print("saved", results.save_csv(table4, "24_defsentplus_table4.csv", **meta))
plots.save_ours_minus_paper(table4, results.TRANSFER_COLS, "DefSent+ Table 4", MODEL, reference,
                            "24_defsentplus_table4.png", unit="accuracy %", **meta)
