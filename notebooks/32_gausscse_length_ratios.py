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
# # 32 · Length ratios of premise and hypothesis (Figure 2)
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/defsent-lite/defsent_lite/blob/main/notebooks/32_gausscse_length_ratios.ipynb)
#
# Why is the length baseline so strong on SNLI (92.63%) and weak on SICK (69.14%)? SNLI
# hypotheses are written as short summaries of long image captions, so log(len(premise) /
# len(hypothesis)) sits mostly above 0; SICK's sentence B is a rule-based rewrite of A of
# about the same length, so its ratios pile up at 0. The histograms below are of the
# entailment pairs of each test set (the pairs of the direction task; full sets, no model
# involved), lengths in characters, the unit with which the paper's length-baseline row
# is reproduced on the full test sets (notebook 31). The second figure asks whether GaussCSE
# (ent+rev, notebook 30's run) gets the direction right where the length baseline cannot.
#
# $$r = \log \frac{\operatorname{len}(\text{entailing})}{\operatorname{len}(\text{entailed})}, \qquad \text{length baseline: } A \Rightarrow B \text{ iff } \operatorname{len}(A) > \operatorname{len}(B).$$

# %% tags=["parameters"]
import os

SCALE = os.environ.get("DEFSENT_SCALE", "smoke")
DATA_ROOT = os.environ.get("DEFSENT_DATA")  # None: found (data/, else ../shared/data)
MODEL = None
VARIANT = "official"  # the released code (default); "paper": the paper's text where they differ
DRIVE = None  # Colab: data, cache, results on Google Drive (None: at every scale but smoke)

# %%
# Colab only: install the package from the branch the badge opened this notebook from, and fetch
# what this notebook reads at its scale into DRIVE's choice of home (a parameter above).
import subprocess, sys
if "google.colab" in sys.modules:
    package = "defsent_lite[offline] @ git+https://github.com/defsent-lite/defsent_lite@main"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
    from defsent_lite.repro import colab
    colab.setup("32", SCALE, DATA_ROOT, drive=DRIVE)

# %%
import numpy as np
import pandas as pd

from defsent_lite.paper import aggregate, plots, results
from defsent_lite.repro import gausscse_protocol, gausscse_tables, plans, preflight

# the scale's settings and model; every file and model it needs, checked before any work
scale, MODEL = preflight.start("32", SCALE, DATA_ROOT, MODEL)
_, full_tests, sick_full = gausscse_protocol.eval_data(None, DATA_ROOT)
ratios = {name: gausscse_tables.log_length_ratios(name, rows, sick_full)
          for name, rows in full_tests.items()}
fig = plots.length_ratio_histograms(ratios)
data = ("full SNLI test, MNLI dev_mismatched, SICK test; "
        "entailment pairs (SICK: one direction)")
print("saved", results.save_figure(fig, "32_gausscse_figure2.png", scale=scale["name"], data=data))

# %% [markdown]
# Where the released code and the paper's text differ (`VARIANT` picks; notebook 30 says more):

# %%
aggregate.whole(gausscse_protocol.differences())

# %%
pd.DataFrame({name: {"pairs": len(r),
                     "share longer entailing": float(np.mean(r > 0)),
                     "share equal length": float(np.mean(r == 0)),
                     "median log ratio": float(np.median(r))}
              for name, r in ratios.items()}).T.round(3)

# %% [markdown]
# ## Direction accuracy by length ratio (ours, ent+rev)
# Pairs of the evaluated subsets binned by their log length ratio, and how many of them the
# model gets right; the length baseline is right exactly on the positive bins (wrong at 0, where
# it has no answer). Counts rather than shares: a bin may hold 3 pairs. At smoke scale the
# model's counts are a **pipeline check** (notebook 31: two steps teach no direction); the
# pair counts per bin involve no model and are exact.

# %%
base = gausscse_protocol.base_config(scale, MODEL, DATA_ROOT, VARIANT)
print("variant:", base["variant"], f"({base['reduction']})")
# the plan and its time estimate first (printed at the protocol scales)
plans.print_plan(scale, lambda: gausscse_protocol.plan(base, [base["seed"]], DATA_ROOT,
                                                        settings=["ent+rev"]))
run = gausscse_protocol.run(dict(base, setting="ent+rev"), DATA_ROOT)
_, tests, _ = gausscse_protocol.eval_data(base["test_max"], DATA_ROOT)
gausscse_tables.direction_by_length(run, tests, sick_full)
