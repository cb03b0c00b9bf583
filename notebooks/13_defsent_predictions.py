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
# # 13 · DefSent: what words does a sentence vector predict? (Tables 6 and 7)
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/defsent-lite/defsent_lite/blob/main/notebooks/13_defsent_predictions.ipynb)
#
# Feed a sentence embedding to the frozen word-prediction head and read off the most
# probable words. Table 6 uses definition sentences (does the vector land on the defined
# word?), Table 7 other phrases ("royal woman", "not bad", "Star wars in Japan"): the
# paper's point is that DefSent vectors behave like contextual word embeddings, so the
# predictions read like a reverse dictionary. Inputs are the paper's, verbatim.
#
# $$\text{top-}k(s) = \operatorname{arg\,top}_k\ \mathrm{head}\big(\operatorname{pool}(\mathrm{BERT}_\theta(s))\big)$$ (`defsent.top_k_words`).
#
# The paper used BERT-large with CLS pooling. At the smoke scale we use mini-BERT trained in
# notebook 10 (CLS pooling, reused from the run cache), with its own pre-trained MLM head: its
# lists are the stand-in's own, not the paper's (below, the defined word is in its top 3 for
# none of the 12 definitions, before or after training; the paper's: 8). Its head, learnt from
# 1.9M tokens, predicts frequent words of the right kind ("moon" for a satellite, "person" for
# a chief) more than the defined word.
# "untrained" shows the same head on the encoder before DefSent training.

# %% tags=["parameters"]
import os

SCALE = os.environ.get("DEFSENT_SCALE", "smoke")
DATA_ROOT = os.environ.get("DEFSENT_DATA")  # None: found (data/, else ../shared/data)
MODEL = None
POOLING = "cls"
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
    colab.setup("13", SCALE, DATA_ROOT, drive=DRIVE)

# %%
import pandas as pd

from defsent_lite.data import dictionary
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper import aggregate, results
from defsent_lite.repro import defsent_protocol, plans, preflight
from defsent_lite.runtime import defsent_model

# the scale's settings and model; every file and model it needs, checked before any work
scale, MODEL = preflight.start("13", SCALE, DATA_ROOT, MODEL)
prefix_space = defsent_protocol.variant_settings(VARIANT)["prefix_space"]
untrained = defsent_model.load(MODEL, prefix_space=prefix_space)
paper_data = scale["paper_protocol"]   # Ishiwatari's Oxford splits, else what is at hand
dataset = dictionary.defsent_dataset(untrained.tokenizer, DATA_ROOT,
                                     defsent_protocol.variant_settings(VARIANT)["data"],
                                     paper_data=paper_data)
base = defsent_protocol.base_config(scale, MODEL, variant=VARIANT)
lr_xs, first_seed = scale["defsent_lr_xs"], scale["seeds"][:1]
# the plan and its time estimate first (printed at the protocol scales)
plans.print_plan(scale,
                     lambda: defsent_protocol.plan(base, [POOLING], lr_xs, first_seed, dataset))
runs = defsent_protocol.final_runs(base, POOLING, lr_xs, first_seed, dataset).runs
trained = defsent_model.load(runs[0]["path"])
print("scale:", scale["name"], "| variant:", VARIANT, "| model:", MODEL, "| pooling:", POOLING,
      "| head:", trained.head_kind)


# %% [markdown]
# Where the released code and the paper's text differ (`VARIANT` picks; notebook 10 says more):

# %%
aggregate.whole(defsent_protocol.differences())

# %% [markdown]
# ## Table 6: definitions

# %%
defs = [d for _, d, _ in paper_defsent.TABLE6]
top_k = defsent_protocol.top_k_strings  # each sentence's top words, joined
table6 = pd.DataFrame({"word": [w for w, _, _ in paper_defsent.TABLE6], "definition": defs,
                       "paper (BERT-large)": [" ".join(p) for _, _, p in paper_defsent.TABLE6],
                       "ours untrained": top_k(untrained, defs, POOLING, 3),
                       "ours DefSent": top_k(trained, defs, POOLING, 3)})
hits = {c: sum(w in p.split() for w, p in zip(table6["word"], table6[c]))
        for c in ("paper (BERT-large)", "ours untrained", "ours DefSent")}
print("defined word among the top 3:", hits)
table6

# %% [markdown]
# ## Table 7: other sentences

# %%
inputs = [s for s, _ in paper_defsent.TABLE7]
table7 = pd.DataFrame({"input": inputs,
                       "paper (BERT-large)": [" ".join(p) for _, p in paper_defsent.TABLE7],
                       "ours untrained": top_k(untrained, inputs, POOLING, 5),
                       "ours DefSent": top_k(trained, inputs, POOLING, 5)})
table7

# %%
meta = dict(model=MODEL, head=trained.head_kind, scale=scale["name"], seeds=first_seed,
            pooling=POOLING, data=dataset[1]["source"])
print("saved", results.save_csv(table6, "13_defsent_table6.csv", **meta))
print("saved", results.save_csv(table7, "13_defsent_table7.csv", **meta))
