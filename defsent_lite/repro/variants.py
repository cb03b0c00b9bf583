"""A method's named settings: the released code's ("official", the default) or the paper text's
("paper"), and the table of the settings where the two differ (every notebook shows it)."""

import pandas as pd


def pick(method, variants, name):
    """The settings of variant `name` of `method`; an unknown name is an error naming the
    choices."""
    if name not in variants:
        raise ValueError(f"unknown {method} variant {name!r}; choose from {tuple(variants)}")
    return variants[name]


def differences_table(rows, columns):
    """(setting, ...) rows as a DataFrame indexed by setting; a notebook shows it whole with
    `whole`."""
    return pd.DataFrame(rows, columns=columns).set_index(columns[0])


class whole:
    """A table displayed without cutting long cells to '...' (HTML in notebooks, plain text
    elsewhere)."""

    def __init__(self, df):
        self.df = df

    def _repr_html_(self):
        return self.df.to_html()

    def __repr__(self):
        return self.df.to_string()


def autocast_training(cfg, settings):
    """Whether a run trains under bf16/fp16 autocast: the scale's `train_autocast` when it sets one
    (the one-Colab-session scale: True, a listed difference), else the variant's
    `mixed_precision`."""
    return (
        cfg["train_autocast"]
        if cfg.get("train_autocast") is not None
        else settings["mixed_precision"]
    )
