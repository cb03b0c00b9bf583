"""DefSent+ (Liu et al., 2024): the published numbers, transcribed from ../shared/papers
(tests/test_reference_numbers.py finds every row in the paper under its name)."""

# DefSent+ (Liu et al., 2024), Table 1: dictionary datasets.
TABLE1 = {
    "a (Oxford + WordNet)": [331472, 150518, 138, 12, 141, 12],
    "b (Oxford)": [122209, 36767, 108, 12, 113, 12],
    "c (Oxford single words in BERT vocab.)": [67553, 9647, 85, 12, 93, 12],
}

# DefSent+, Table 2 (mean over 10 runs, BERT-base-uncased rows and DefSent's baseline).
TABLE2 = {
    "DefSent BERT-base": [67.30, 81.96, 71.92, 77.68, 76.71, 76.90, 73.28, 75.11],
    "DefSent+ BERT-base 1st-(Mean,AMP)-c": [65.24, 82.25, 72.37, 80.80, 77.11, 77.38, 72.38, 75.36],
    "DefSent+ BERT-base 1st-(CLS,AMP)-b": [68.03, 81.97, 74.37, 81.59, 79.18, 79.48, 71.64, 76.61],
    "DefSent+ BERT-base 1st-(CLS,AMP)-a": [69.09, 83.44, 75.88, 82.63, 80.26, 81.13, 72.73, 77.88],
    "DefSent+ BERT-base 2nd-(CLS,AMP)-a": [70.18, 84.18, 76.54, 83.21, 80.66, 81.50, 72.53, 78.40],
    "DefSent+ BERT-base 3rd-(CLS,AMP)-a": [69.91, 84.19, 76.90, 83.52, 80.60, 81.17, 72.64, 78.42],
    "DefSent+ BERT-base(ICA) 3rd-(CLS,AMP)-a": [71.23, 84.56, 76.93, 83.19, 80.69, 81.57, 72.38, 78.65],
}

# DefSent+, Table 8: STS average after 1st Training on dataset a per encoding combination.
TABLE8_COLS = ["(Mean, AMP)", "(CLS, AMP)", "(Mean, AC)", "(CLS, AC)"]

TABLE8 = {
    "BERT-base": [77.50, 77.88, 74.62, 75.10], "BERT-large": [78.16, 79.40, 75.27, 76.54],
    "RoBERTa-base": [76.68, 76.78, 78.44, 77.66], "RoBERTa-large": [76.97, 79.39, 79.81, 79.49],
}

# DefSent+, Table 4 (SentEval accuracy), BERT-base rows. The extracted table splits each DefSent+
# encoder's name over two lines and puts a block's numbers on its first lines, in encoder order:
# BERT-base(ICA)'s row is the first (avg 86.33), not the line that carries its name (87.93 is
# BERT-large(ICA)'s). tests/test_reference_numbers.py checks every table here against the papers.
TABLE4 = {
    "DefSent BERT-base": [81.72, 88.14, 94.89, 90.11, 87.04, 89.20, 75.83, 86.70],
    "DefSent+ BERT-base(ICA) 3rd-(CLS,AMP)-a": [81.06, 87.15, 94.59, 89.39, 86.55, 89.60, 75.94, 86.33],
    "SimCSE BERT-base": [81.18, 86.20, 94.43, 88.87, 85.50, 89.80, 74.49, 85.78],
}

TABLE1_COLS = ["definitions", "entries", "max_len_bert", "median_len_bert",
                           "max_len_roberta", "median_len_roberta"]
