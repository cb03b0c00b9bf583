# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 20 · DefSent+ datasets (Table 1)
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/defsent-lite/defsent_lite/blob/main/notebooks/20_defsentplus_datasets.ipynb)
#
# DefSent+ keeps **every** dictionary entry (multi-word ones too): an entry is represented
# by the mean of its definitions' embeddings (Eq. 2), so no word-vocabulary filter is
# needed. Three datasets: *a* = Oxford + WordNet (same-named entries merged, repeated
# definitions dropped), *b* = all of Oxford, *c* = Oxford single words in BERT's vocabulary
# (BERT's for every model, RoBERTa too: footnote 8).
#
# **Offline** only Oxford valid+test is at hand (no train split), so *b* and *c* are about a
# fifth of the paper's; *a* adds all of WordNet 3.0 and comes close. Expect the max/median
# token lengths to match the paper where the long definitions are present.

# %%
# Colab: install defsent_lite (keeps Colab's torch), keep data, cache and results under
# DEFSENT_HOME (on Drive with USE_DRIVE = True: resumable across sessions). Elsewhere: nothing.
import subprocess, sys
if "google.colab" in sys.modules:
    USE_DRIVE = False
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "defsent_lite[offline] @ git+https://github.com/defsent-lite/defsent_lite@main"], check=True)
    from defsent_lite import colab
    colab.setup(drive=USE_DRIVE)

# %% tags=["parameters"]
import os

DATA_ROOT = os.environ.get("DEFSENT_DATA", "data")
BERT = os.environ.get("DEFSENT_MODEL", "offline")   # offline = all-MiniLM-L6-v2 (bert-base-uncased vocabulary)
ROBERTA = "roberta-base"                            # needs a connected machine
SCALE = os.environ.get("DEFSENT_SCALE", "smoke")

# %%
import numpy as np
import pandas as pd

from defsent_lite import defsentplus, dictionary, models, paper_defsentplus, plots, preflight, results

pd.set_option("display.width", 140)
preflight.check("20", SCALE, DATA_ROOT, [BERT])  # every file and model it needs, before any work
bert_tok, roberta_tok = models.tokenizers_at_hand(BERT, ROBERTA)

# %% [markdown]
# ## Table 1: definitions, entries, max (median) tokenised length

# %%
ours = results.paper_table(dictionary.defsentplus_table1(bert_tok, roberta_tok, DATA_ROOT),
                           paper_defsentplus.TABLE1_COLS)
paper = results.paper_table(paper_defsentplus.TABLE1, paper_defsentplus.TABLE1_COLS)
table1 = results.side_by_side(paper, ours, {k: (k, k) for k in paper.index}, digits=1)
table1

# %% [markdown]
# ## What training sees: usable definitions and definitions per entry
# Empty definitions are dropped and counted, and so is an entry left without any. The
# softmax of Eq. 5 runs over all entries, so its chance loss is log(entries).

# %%
full = {name: defsentplus.load_entry_dataset(name, None, DATA_ROOT) for name in "abc"}
report = pd.DataFrame({name: d["report"] for name, d in full.items()}).T
report["chance loss log(entries)"] = np.log(report["entries"].astype(float)).round(2)
report

# %%
fig = plots.definitions_per_entry({name: d["ids"] for name, d in full.items()})

# %%
meta = dict(model=BERT, scale=SCALE, seeds="-", data=f"Oxford {report.loc['b', 'source'].split('Oxford ')[1]} (+ WordNet 3.0 for a)")
print("saved", results.save_csv(table1, "20_defsentplus_table1.csv", **meta))
print("saved", results.save_csv(report, "20_defsentplus_entry_datasets.csv", **meta))
print("saved", results.save_figure(fig, "20_defsentplus_definitions_per_entry.png", **meta))
