"""GaussCSE (Yoda et al., 2023): the published numbers, transcribed from ../shared/papers
(tests/test_reference_numbers.py finds every row in the paper under its name)."""

# GaussCSE, Tables 1 and 3 (Appendix C): NLI accuracy and AUPRC (x100), SNLI / MNLI / SICK, per
# (model, loss setting), mean of 5 seeds; the supervised SimCSE baseline was run with
# BERT-base only.
NLI_COLS = ["SNLI acc", "SNLI AUPRC", "MNLI acc", "MNLI AUPRC", "SICK acc", "SICK AUPRC"]
MODELS = ["BERT-base", "BERT-large", "RoBERTa-base", "RoBERTa-large"]  # the papers' order of blocks

TABLE3 = {
    "SimCSE (BERT-base)": [74.96, 66.76, 78.18, 75.88, 86.11, 81.41],
    ("BERT-base", "ent"): [72.44, 60.65, 67.92, 56.96, 67.70, 68.26],
    ("BERT-base", "ent+con"): [77.63, 70.95, 77.71, 74.21, 80.38, 82.12],
    ("BERT-base", "ent+rev"): [69.32, 54.21, 66.04, 53.87, 67.93, 63.60],
    ("BERT-base", "ent+con+rev"): [76.64, 67.07, 76.85, 71.34, 83.15, 79.45],
    ("BERT-large", "ent"): [73.51, 62.79, 69.88, 61.96, 70.85, 72.56],
    ("BERT-large", "ent+con"): [77.79, 71.11, 78.31, 75.23, 81.24, 83.73],
    ("BERT-large", "ent+rev"): [69.46, 54.67, 66.23, 55.28, 68.13, 64.73],
    ("BERT-large", "ent+con+rev"): [77.02, 68.02, 77.86, 73.65, 83.73, 80.99],
    ("RoBERTa-base", "ent"): [72.10, 59.98, 68.77, 58.39, 67.50, 67.02],
    ("RoBERTa-base", "ent+con"): [77.60, 70.58, 78.76, 75.90, 81.21, 83.26],
    ("RoBERTa-base", "ent+rev"): [69.35, 54.21, 66.19, 54.50, 66.54, 61.90],
    ("RoBERTa-base", "ent+con+rev"): [76.37, 66.39, 77.74, 73.01, 82.95, 80.46],
    ("RoBERTa-large", "ent"): [72.54, 60.74, 68.67, 60.21, 69.96, 72.01],
    ("RoBERTa-large", "ent+con"): [78.05, 71.41, 79.96, 78.12, 81.05, 84.91],
    ("RoBERTa-large", "ent+rev"): [69.17, 54.54, 66.47, 55.96, 67.84, 68.05],
    ("RoBERTa-large", "ent+con+rev"): [76.68, 67.14, 79.07, 75.58, 84.17, 82.41],
}

# GaussCSE, Tables 2 and 4 (Appendix D): entailment-direction accuracy per (model, loss setting);
# the length baseline does not depend on a model.
DIR_COLS = ["SNLI", "MNLI", "SICK", "avg"]

# GaussCSE, Table 1 (NLI accuracy, Table 3's accuracy columns): the averages it prints, for the rows
# it prints (SimCSE, BERT-base and RoBERTa-large; BERT-large and RoBERTa-base are in Table 3 only),
# keyed as TABLE3. Two differ from the mean of the three printed accuracies in the last digit.
TABLE1_AVG = {
    "SimCSE (BERT-base)": 79.75,
    ("BERT-base", "ent"): 69.35,
    ("BERT-base", "ent+con"): 78.57,
    ("BERT-base", "ent+rev"): 67.76,
    ("BERT-base", "ent+con+rev"): 78.88,
    ("RoBERTa-large", "ent"): 70.39,
    ("RoBERTa-large", "ent+con"): 79.68,
    ("RoBERTa-large", "ent+rev"): 67.82,
    ("RoBERTa-large", "ent+con+rev"): 79.97,
}

TABLE2 = {
    "Length-baseline": [92.63, 82.64, 69.14, 81.47],
    ("BERT-base", "ent"): [64.84, 61.11, 60.10, 62.01],
    ("BERT-base", "ent+con"): [64.55, 56.84, 69.67, 63.68],
    ("BERT-base", "ent+rev"): [97.60, 92.64, 87.80, 92.68],
    ("BERT-base", "ent+con+rev"): [97.38, 91.92, 86.22, 91.84],
    ("BERT-large", "ent"): [62.06, 60.09, 62.09, 61.41],
    ("BERT-large", "ent+con"): [62.43, 54.87, 69.01, 62.10],
    ("BERT-large", "ent+rev"): [97.66, 92.76, 88.03, 92.81],
    ("BERT-large", "ent+con+rev"): [97.55, 93.11, 85.94, 92.20],
    ("RoBERTa-base", "ent"): [65.84, 60.41, 59.69, 61.98],
    ("RoBERTa-base", "ent+con"): [65.66, 55.24, 69.97, 63.62],
    ("RoBERTa-base", "ent+rev"): [97.74, 93.15, 87.90, 92.93],
    ("RoBERTa-base", "ent+con+rev"): [97.44, 93.10, 88.43, 92.99],
    ("RoBERTa-large", "ent"): [66.91, 60.88, 61.56, 63.11],
    ("RoBERTa-large", "ent+con"): [64.57, 55.31, 71.38, 63.75],
    ("RoBERTa-large", "ent+rev"): [97.89, 93.97, 88.71, 93.52],
    ("RoBERTa-large", "ent+con+rev"): [97.42, 93.61, 86.57, 92.53],
}


def rows_for(table, model_label):
    """{row label: numbers} of one model's block (loss settings by name) and the model-free baseline
    rows (SimCSE, length baseline), as Tables 1-4 show them; {} of the block for a model not
    reported."""
    return {
        (k[1] if isinstance(k, tuple) else k): v
        for k, v in table.items()
        if not isinstance(k, tuple) or k[0] == model_label
    }


# GaussCSE, Table 5 (Appendix E): SNLI-dev AUPRC x100 of the grid, per (model, batch size),
# lr 1e-5 / 3e-5 / 5e-5.
GRID_LRS = [1e-5, 3e-5, 5e-5]

TABLE5 = {
    ("bert-base-uncased", 16): [63.05, 65.72, 66.21],
    ("bert-base-uncased", 32): [62.02, 64.69, 64.84],
    ("bert-base-uncased", 64): [60.44, 62.93, 64.20],
    ("bert-base-uncased", 128): [58.99, 61.26, 62.66],
    ("bert-large-uncased", 16): [64.66, 65.65, 61.09],
    ("bert-large-uncased", 32): [63.73, 65.56, 63.42],
    ("bert-large-uncased", 64): [62.24, 65.01, 62.46],
    ("bert-large-uncased", 128): [60.72, 63.41, 64.68],
    ("roberta-base", 16): [64.66, 65.78, 66.31],
    ("roberta-base", 32): [63.06, 65.09, 65.68],
    ("roberta-base", 64): [61.59, 64.18, 64.95],
    ("roberta-base", 128): [60.48, 62.54, 63.84],
    ("roberta-large", 16): [66.22, 67.17, 61.69],
    ("roberta-large", 32): [65.96, 67.10, 60.64],
    ("roberta-large", 64): [64.26, 66.01, 66.88],
    ("roberta-large", 128): [63.07, 64.91, 65.72],
}
