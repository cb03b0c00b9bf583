"""GaussCSE (Yoda et al., 2023): the published numbers, transcribed from ../shared/papers
(tests/test_reference_numbers.py finds every row in the paper under its name)."""

# GaussCSE, Tables 1 and 3 (BERT-base): NLI accuracy and AUPRC (x100), SNLI / MNLI / SICK.
NLI_COLS = ["SNLI acc", "SNLI AUPRC", "MNLI acc", "MNLI AUPRC", "SICK acc", "SICK AUPRC"]

TABLE3 = {
    "SimCSE (BERT-base)": [74.96, 66.76, 78.18, 75.88, 86.11, 81.41],
    "ent": [72.44, 60.65, 67.92, 56.96, 67.70, 68.26],
    "ent+con": [77.63, 70.95, 77.71, 74.21, 80.38, 82.12],
    "ent+rev": [69.32, 54.21, 66.04, 53.87, 67.93, 63.60],
    "ent+con+rev": [76.64, 67.07, 76.85, 71.34, 83.15, 79.45],
}

# GaussCSE, Tables 2 and 4 (BERT-base): entailment-direction accuracy.
DIR_COLS = ["SNLI", "MNLI", "SICK", "avg"]

TABLE2 = {
    "Length-baseline": [92.63, 82.64, 69.14, 81.47],
    "ent": [64.84, 61.11, 60.10, 62.01],
    "ent+con": [64.55, 56.84, 69.67, 63.68],
    "ent+rev": [97.60, 92.64, 87.80, 92.68],
    "ent+con+rev": [97.38, 91.92, 86.22, 91.84],
}

# GaussCSE, Table 5 (Appendix E): SNLI-dev AUPRC x100 of the grid, per (model, batch size), lr 1e-5 / 3e-5 / 5e-5.
GRID_LRS = [1e-5, 3e-5, 5e-5]

TABLE5 = {
    ("bert-base-uncased", 16): [63.05, 65.72, 66.21], ("bert-base-uncased", 32): [62.02, 64.69, 64.84],
    ("bert-base-uncased", 64): [60.44, 62.93, 64.20], ("bert-base-uncased", 128): [58.99, 61.26, 62.66],
    ("bert-large-uncased", 16): [64.66, 65.65, 61.09], ("bert-large-uncased", 32): [63.73, 65.56, 63.42],
    ("bert-large-uncased", 64): [62.24, 65.01, 62.46], ("bert-large-uncased", 128): [60.72, 63.41, 64.68],
    ("roberta-base", 16): [64.66, 65.78, 66.31], ("roberta-base", 32): [63.06, 65.09, 65.68],
    ("roberta-base", 64): [61.59, 64.18, 64.95], ("roberta-base", 128): [60.48, 62.54, 63.84],
    ("roberta-large", 16): [66.22, 67.17, 61.69], ("roberta-large", 32): [65.96, 67.10, 60.64],
    ("roberta-large", 64): [64.26, 66.01, 66.88], ("roberta-large", 128): [63.07, 64.91, 65.72],
}
