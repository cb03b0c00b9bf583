"""Before any work, check that every file a notebook will read and every model it will load are
there; stop with one message listing what is missing and the one command that fetches it.

    S, MODEL = preflight.start("30", SCALE, DATA_ROOT, MODEL)   # the scale's settings and model,
    checked

Fetching is its own call (`python -m defsent_lite.data.download fetch`; on Colab the install cell
calls colab.fetch): this check downloads nothing. At smoke/cpu scale an offline
stand-in (Oxford valid+test with WordNet, the 7,409 offline NLI triplets) is accepted and said
so; at paper and rehearsal scale only the paper's datasets are. The rehearsal scales run stand-in
models: their hub names must be in DEFSENT_MODEL_FOLDERS (`python tests/standins.py DIR` builds
them), and they stand in for the rest of the process (config.use_standins;
the environment is left as it is).
"""

import os
from pathlib import Path
from typing import NamedTuple

from huggingface_hub import file_exists, try_to_load_from_cache
from huggingface_hub.utils import HFValidationError

import torch

from defsent_lite.runtime import config
from defsent_lite.data import sources


class PreflightFailed(RuntimeError):
    """Something the notebook needs is missing; the message lists it and how to get it."""


WEIGHTS = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def folder_problem(folder):
    """None when a model folder holds a config, weights and a tokenizer, else what it lacks."""
    folder = Path(folder)
    lacks = [
        what
        for what, present in (
            ("config.json", (folder / "config.json").is_file()),
            (
                "weights (" + " or ".join(WEIGHTS[::2]) + ")",
                any((folder / w).is_file() for w in WEIGHTS),
            ),
            (
                "a tokenizer (tokenizer.json, vocab.txt or vocab.json)",
                any(
                    (folder / t).is_file()
                    for t in ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer_config.json")
                ),
            ),
        )
        if not present
    ]
    return f"{folder}, a folder without {', '.join(lacks)}" if lacks else None


def model_problem(name):
    """None when the model can be loaded here (a model shipped with the installation, local folder,
    hub cache or a reachable hub), else why not."""
    folder = config.model_folders().get(str(name))
    if folder is not None:
        problem = folder_problem(folder)
        return f"{name}: DEFSENT_MODEL_FOLDERS maps it to {problem}" if problem else None
    try:
        bundled = config.bundled_model_path(name)
    except ImportError as e:
        return str(e)
    if bundled is not None:
        return folder_problem(bundled)
    if Path(name).expanduser().is_dir():
        return folder_problem(Path(name).expanduser())
    if (
        str(name).startswith((".", "/", "~"))
        or os.sep + os.sep in str(name)
        or str(name).count("/") > 1
    ):
        return f"{name}: no such folder here, and not a hub model name (owner/name)"
    if config.standins_enabled():
        return (
            f"{name}: this scale runs stand-in models, and DEFSENT_MODEL_FOLDERS has none for it "
            "(`python tests/standins.py DIR` builds them and prints the setting)"
        )
    try:
        if isinstance(try_to_load_from_cache(name, "config.json"), str):
            return None
        if config.hub_offline():
            return f"{name}: not in the Hugging Face cache and HF_HUB_OFFLINE is set"
        return (
            None
            if file_exists(name, "config.json")
            else f"{name}: no such model on the Hugging Face hub"
        )
    except HFValidationError:
        return f"{name}: no such folder here, and not a valid hub model name (owner/name)"
    except Exception as e:  # no network, hub down: say so rather than fail later
        return f"{name}: the Hugging Face hub could not be reached ({type(e).__name__})"


def paper_cpu_warning(scale_name, device=None):
    """The line a paper-scale notebook prints first on a machine without a GPU (None elsewhere)."""
    if scale_name in ("paper", "colab") and config.device(device).type != "cuda":
        return (
            "WARNING: paper scale on a CPU. Every training below runs in fp32 on "
            f"{torch.get_num_threads()} threads; the plan printed before training gives the "
            "estimated time "
            "(days, typically). Use a GPU (Colab: Runtime > Change runtime type > GPU)."
        )
    return None


def check(notebook, scale, data_dir=None, models_needed=(), log=print):
    """Check the notebook's data and models; print one summary line, or
    raise PreflightFailed listing everything missing and the command that fetches it."""
    scale = config.scale_name(scale)
    if config.scale(scale)["standins"] and not config.standins_enabled():
        config.use_standins()  # the rehearsal scale's models are the stand-ins
    if config.standins_enabled():
        log(
            "stand-in models: hub names (bert-base-uncased, roberta-base, ...) load the tiny "
            "random models of DEFSENT_MODEL_FOLDERS; their numbers check the paper path, they "
            "mean nothing"
        )
    if paper_cpu_warning(scale):
        log(paper_cpu_warning(scale))
    result = sources.check_data(notebook, scale, data_dir)
    problems = [p for p in map(model_problem, dict.fromkeys(models_needed)) if p]
    if result.missing or result.changed or problems:
        lines = [f"notebook {notebook} at {scale} scale cannot start:"]
        for what, paths in result.missing:
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            lines.append(f"  - {what}: missing {shown}")
        for what, paths in result.changed:
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            lines.append(
                f"  - {what}: {shown} differ(s) from the pinned SHA-256 (truncated or edited?)"
            )
        lines += [f"  - model {p}" for p in problems]
        if result.missing or result.changed:
            lines.append(
                "Fetch the data with:\n  python -m defsent_lite.data.download fetch --for "
                f"{str(notebook)[:2]} --scale {scale} --root {config.data_root(data_dir)}"
            )
        raise PreflightFailed("\n".join(lines))
    needs = sources.needs(notebook, scale)
    log(
        f"preflight: {len(needs)} data needs met ({', '.join(n.what for n in needs)}); models: "
        f"{', '.join(models_needed) or 'none'}"
    )
    for note in result.stand_ins:
        log(f"offline stand-in (smoke/cpu only) - {note}")
    return result


class NotebookStart(NamedTuple):
    scale: dict  # config.scale(): the scale's settings
    model: str  # the model asked for, else the scale's


def start(notebook, scale, data_dir=None, model=None, log=print):
    """A notebook's first call: its scale's settings and model (`model` or the scale's), with every
    file and model it needs checked by check() before any work."""
    settings = config.scale(scale)
    model = model or settings["model"]
    check(notebook, scale, data_dir, [model], log=log)
    return NotebookStart(settings, model)
