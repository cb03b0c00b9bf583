"""DefSent (Tsukagoshi et al., 2021): the published numbers, transcribed from ../shared/papers
(tests/test_reference_numbers.py finds every row in the paper under its name)."""

# DefSent Tables 3 and 4: the untrained rows, computed with bert-base-uncased (no Max row, no
# other model).
UNTRAINED_ROWS = {"bert-base-uncased": {"cls": "BERT CLS-vector", "mean": "Avg. BERT embeddings"}}

# DefSent (Tsukagoshi et al., 2021), Table 3: Spearman x100 on STS. Baseline rows are
# Reimers & Gurevych (2019)'s, computed with bert-base.
TABLE3 = {
    "Avg. GloVe embeddings": [55.14, 70.66, 59.73, 68.25, 63.66, 58.02, 53.76, 61.32],
    "Avg. BERT embeddings": [38.78, 57.98, 57.98, 63.15, 61.06, 46.35, 58.40, 54.81],
    "BERT CLS-vector": [20.16, 30.01, 20.09, 36.88, 38.08, 16.50, 42.63, 29.19],
    "InferSent - GloVe": [52.86, 66.75, 62.15, 72.77, 66.87, 68.03, 65.65, 65.01],
    "Universal Sentence Encoder": [64.49, 67.80, 64.61, 76.83, 73.18, 74.92, 76.69, 71.22],
    "Sentence-BERT-base (Mean)": [70.97, 76.53, 73.19, 79.09, 74.30, 77.03, 72.91, 74.89],
    "Sentence-BERT-large (Mean)": [72.27, 78.46, 74.90, 80.99, 76.25, 79.23, 73.75, 76.55],
    "Sentence-RoBERTa-base (Mean)": [71.54, 72.49, 70.80, 78.74, 73.69, 77.77, 74.46, 74.21],
    "Sentence-RoBERTa-large (Mean)": [74.53, 77.00, 73.18, 81.85, 76.82, 79.10, 74.29, 76.68],
    "DefSent-BERT-base (CLS)": [67.56, 79.86, 69.52, 76.83, 76.61, 75.57, 73.05, 74.14],
    "DefSent-BERT-large (CLS)": [66.22, 82.07, 71.48, 79.34, 75.38, 73.46, 74.30, 74.61],
    "DefSent-RoBERTa-base (CLS)": [65.55, 80.84, 71.87, 78.77, 79.29, 78.13, 74.92, 75.62],
    "DefSent-RoBERTa-large (Mean)": [58.36, 76.24, 69.55, 73.15, 76.90, 78.53, 73.81, 72.36],
}

# DefSent, Table 4: SentEval accuracy (%).
TABLE4 = {
    "Avg. GloVe embeddings": [77.25, 78.30, 91.17, 87.85, 80.18, 83.00, 72.87, 81.52],
    "Avg. BERT embeddings": [78.66, 86.25, 94.37, 88.66, 84.40, 92.80, 69.45, 84.94],
    "BERT CLS-vector": [78.68, 84.85, 94.21, 88.23, 84.13, 91.40, 71.13, 84.66],
    "InferSent - GloVe": [81.57, 86.54, 92.50, 90.38, 84.18, 88.20, 75.77, 85.59],
    "Universal Sentence Encoder": [80.09, 85.19, 93.98, 86.70, 86.38, 93.20, 70.14, 85.10],
    "Sentence-BERT-base (Mean)": [83.64, 89.43, 94.39, 89.86, 88.96, 89.60, 76.00, 87.41],
    "Sentence-BERT-large (Mean)": [84.88, 90.07, 94.52, 90.33, 90.66, 87.40, 75.94, 87.69],
    "DefSent-BERT-base (CLS)": [80.94, 87.57, 94.59, 89.98, 85.78, 89.73, 73.82, 86.06],
    "DefSent-BERT-large (CLS)": [85.79, 90.54, 95.58, 90.15, 91.17, 90.47, 73.74, 88.20],
    "DefSent-RoBERTa-base (CLS)": [83.94, 90.44, 94.05, 90.70, 89.16, 90.80, 75.52, 87.80],
    "DefSent-RoBERTa-large (Mean)": [86.47, 91.53, 95.02, 91.15, 90.77, 92.33, 73.91, 88.74],
}

# DefSent, Table 8 (Appendix): STS Spearman x100 per model and pooling, mean and std of 10 seeds.
TABLE8 = {
    ("BERT-base", "CLS"): [67.56, 79.86, 69.52, 76.83, 76.61, 75.57, 73.05, 74.14],
    ("BERT-base", "Mean"): [67.30, 81.96, 71.92, 77.68, 76.71, 76.90, 73.28, 75.11],
    ("BERT-base", "Max"): [64.61, 82.06, 72.43, 76.56, 75.61, 76.61, 72.15, 74.29],
    ("BERT-large", "CLS"): [66.22, 82.07, 71.48, 79.34, 75.38, 73.46, 74.30, 74.61],
    ("BERT-large", "Mean"): [64.18, 82.76, 73.14, 79.66, 77.93, 77.89, 73.98, 75.65],
    ("BERT-large", "Max"): [58.94, 81.03, 71.34, 76.23, 76.07, 75.75, 71.69, 73.01],
    ("RoBERTa-base", "CLS"): [65.55, 80.84, 71.87, 78.77, 79.29, 78.13, 74.92, 75.62],
    ("RoBERTa-base", "Mean"): [60.78, 77.17, 69.71, 75.13, 77.75, 76.52, 74.10, 73.02],
    ("RoBERTa-base", "Max"): [63.85, 78.55, 71.19, 76.55, 77.86, 78.02, 73.97, 74.28],
    ("RoBERTa-large", "CLS"): [63.84, 77.33, 68.64, 72.86, 77.13, 78.32, 74.14, 73.18],
    ("RoBERTa-large", "Mean"): [58.36, 76.24, 69.55, 73.15, 76.90, 78.53, 73.81, 72.36],
    ("RoBERTa-large", "Max"): [62.89, 77.99, 69.83, 75.60, 79.63, 79.34, 74.04, 74.19],
}

TABLE8_STD = {
    ("BERT-base", "CLS"): [0.26, 0.25, 0.39, 0.32, 0.33, 0.37, 0.32, 0.25],
    ("BERT-base", "Mean"): [0.44, 0.24, 0.28, 0.47, 0.48, 0.40, 0.30, 0.21],
    ("BERT-base", "Max"): [0.87, 0.21, 0.31, 0.74, 0.43, 0.52, 0.46, 0.33],
    ("BERT-large", "CLS"): [0.79, 0.39, 0.33, 0.44, 0.60, 0.45, 0.50, 0.41],
    ("BERT-large", "Mean"): [0.96, 0.42, 0.32, 0.92, 0.78, 0.89, 0.46, 0.53],
    ("BERT-large", "Max"): [1.06, 0.66, 0.88, 1.83, 0.56, 0.70, 0.74, 0.74],
    ("RoBERTa-base", "CLS"): [0.89, 0.26, 0.39, 0.70, 0.27, 0.61, 0.18, 0.38],
    ("RoBERTa-base", "Mean"): [1.41, 0.60, 0.73, 1.00, 0.38, 0.63, 0.45, 0.63],
    ("RoBERTa-base", "Max"): [0.86, 0.90, 0.86, 1.12, 0.59, 0.77, 0.46, 0.62],
    ("RoBERTa-large", "CLS"): [1.34, 2.53, 1.34, 1.96, 1.32, 1.08, 1.31, 1.20],
    ("RoBERTa-large", "Mean"): [1.16, 0.87, 0.85, 1.32, 0.94, 0.54, 0.88, 0.73],
    ("RoBERTa-large", "Max"): [1.42, 1.88, 1.66, 1.51, 0.60, 0.48, 0.84, 0.88],
}

# DefSent, Table 9 (Appendix): SentEval accuracy (%) per model and pooling, mean and std of 3 seeds.
TABLE9 = {
    ("BERT-base", "CLS"): [80.94, 87.57, 94.59, 89.98, 85.78, 89.73, 73.82, 86.06],
    ("BERT-base", "Mean"): [81.84, 88.20, 94.82, 89.94, 86.49, 89.73, 75.32, 86.62],
    ("BERT-base", "Max"): [80.74, 88.00, 94.32, 89.92, 85.03, 89.13, 74.11, 85.89],
    ("BERT-large", "CLS"): [85.79, 90.54, 95.58, 90.15, 91.17, 90.47, 73.74, 88.20],
    ("BERT-large", "Mean"): [84.05, 89.50, 95.21, 90.19, 89.44, 88.60, 73.99, 87.28],
    ("BERT-large", "Max"): [83.48, 89.04, 94.55, 89.88, 87.50, 90.87, 74.28, 87.09],
    ("RoBERTa-base", "CLS"): [83.94, 90.44, 94.05, 90.70, 89.16, 90.80, 75.52, 87.80],
    ("RoBERTa-base", "Mean"): [84.88, 91.09, 94.60, 90.69, 89.73, 93.13, 77.22, 88.76],
    ("RoBERTa-base", "Max"): [83.98, 90.78, 93.96, 90.63, 90.05, 93.60, 77.80, 88.69],
    ("RoBERTa-large", "CLS"): [85.63, 90.74, 94.53, 91.20, 90.08, 93.53, 72.66, 88.34],
    ("RoBERTa-large", "Mean"): [86.47, 91.53, 95.02, 91.15, 90.77, 92.33, 73.91, 88.74],
    ("RoBERTa-large", "Max"): [85.60, 90.73, 94.21, 91.09, 90.65, 91.53, 76.15, 88.56],
}

TABLE9_STD = {
    ("BERT-base", "CLS"): [0.08, 0.12, 0.09, 0.04, 1.14, 0.76, 0.19, 0.28],
    ("BERT-base", "Mean"): [0.17, 0.04, 0.12, 0.12, 0.20, 0.31, 0.78, 0.18],
    ("BERT-base", "Max"): [0.16, 0.09, 0.07, 0.25, 0.09, 0.50, 0.49, 0.02],
    ("BERT-large", "CLS"): [0.19, 0.26, 0.14, 0.04, 0.06, 0.95, 0.61, 0.07],
    ("BERT-large", "Mean"): [0.25, 0.24, 0.12, 0.36, 0.14, 0.87, 0.90, 0.05],
    ("BERT-large", "Max"): [0.30, 0.37, 0.09, 0.17, 0.26, 1.30, 1.27, 0.27],
    ("RoBERTa-base", "CLS"): [0.30, 0.49, 0.06, 0.17, 0.22, 0.35, 0.42, 0.20],
    ("RoBERTa-base", "Mean"): [0.21, 0.01, 0.10, 0.07, 0.54, 0.12, 0.46, 0.08],
    ("RoBERTa-base", "Max"): [0.03, 0.24, 0.07, 0.11, 0.06, 0.72, 0.32, 0.12],
    ("RoBERTa-large", "CLS"): [0.27, 0.15, 0.14, 0.11, 0.59, 0.76, 1.73, 0.28],
    ("RoBERTa-large", "Mean"): [0.29, 0.06, 0.08, 0.07, 0.34, 0.64, 0.96, 0.12],
    ("RoBERTa-large", "Max"): [0.26, 0.70, 0.65, 0.32, 0.37, 1.70, 0.33, 0.57],
}

# DefSent, Table 1: words / definitions / average length per split (Oxford, 8:1:1 by word).
TABLE1 = {
    ("All", "Train"): [29413, 97759, 9.921],
    ("All", "Dev"): [3677, 12127, 9.874],
    ("All", "Test"): [3677, 12433, 9.846],
    ("In BERT vocab.", "Train"): [7732, 54142, 9.531],
    ("In BERT vocab.", "Dev"): [936, 6544, 9.512],
    ("In BERT vocab.", "Test"): [979, 6930, 9.551],
    ("In RoBERTa vocab.", "Train"): [7269, 53935, 9.376],
    ("In RoBERTa vocab.", "Dev"): [901, 6625, 9.372],
    ("In RoBERTa vocab.", "Test"): [925, 6945, 9.410],
}

TABLE1_COLS = ["words", "definitions", "avg_length"]

# DefSent, Table 2: word prediction (MRR, top-1, top-3, top-10), mean of 10 seeds.
TABLE2 = {
    ("BERT-base (no fine-tuning)", "CLS"): [0.0009, 0.0000, 0.0000, 0.0000],
    ("BERT-base (no fine-tuning)", "Mean"): [0.0132, 0.0001, 0.0043, 0.0242],
    ("BERT-base (no fine-tuning)", "Max"): [0.0327, 0.0157, 0.0320, 0.0626],
    ("BERT-base", "CLS"): [0.3200, 0.2079, 0.3670, 0.5418],
    ("BERT-base", "Mean"): [0.3091, 0.1972, 0.3524, 0.5356],
    ("BERT-base", "Max"): [0.2939, 0.1840, 0.3350, 0.5207],
    ("BERT-large", "CLS"): [0.3587, 0.2388, 0.4139, 0.6011],
    ("BERT-large", "Mean"): [0.3286, 0.2091, 0.3792, 0.5723],
    ("BERT-large", "Max"): [0.2925, 0.1814, 0.3356, 0.5194],
    ("RoBERTa-base", "CLS"): [0.3436, 0.2241, 0.3983, 0.5836],
    ("RoBERTa-base", "Mean"): [0.3365, 0.2170, 0.3906, 0.5783],
    ("RoBERTa-base", "Max"): [0.3072, 0.1941, 0.3523, 0.5386],
    ("RoBERTa-large", "CLS"): [0.3863, 0.2611, 0.4460, 0.6364],
    ("RoBERTa-large", "Mean"): [0.3995, 0.2699, 0.4634, 0.6599],
    ("RoBERTa-large", "Max"): [0.3175, 0.2015, 0.3646, 0.5543],
}

TABLE2_COLS = ["mrr", "top1", "top3", "top10"]

# DefSent, Table 6: top-3 predicted words for definitions (BERT-large, CLS).
TABLE6 = [
    ("cost", "be expensive for ( someone )", ["cost", "charge", "pay"]),
    ("preserve", "prevent ( food ) from rotting", ["preserve", "keep", "spoil"]),
    ("good", "that which is pleasing or valuable or useful", ["good", "pleasing", "pleasure"]),
    ("linux", "an open-source operating system modelled on unix.", ["linux", "unix", "gnu"]),
    ("pile", "place or lay as if in a pile", ["pile", "stack", "heap"]),
    ("weird", "very strange; bizarre", ["weird", "strange", "bizarre"]),
    ("sale", "the general activity of selling", ["selling", "sale", "retail"]),
    (
        "satellite",
        "a celestial body orbiting the earth or another planet.",
        ["planet", "satellite", "orbit"],
    ),
    ("logic", "the quality of being justifiable by reason", ["reason", "justice", "certainty"]),
    ("custom", "a thing that one does habitually", ["habit", "routine", "ritual"]),
    ("chief", "a person who is in charge", ["leader", "boss", "master"]),
    ("nirvana", "an ideal or idyllic state or place", ["paradise", "dream", "ideal"]),
]

# DefSent, Table 7: top-5 predicted words for other inputs (BERT-large, CLS).
TABLE7 = [
    ("royal man", ["king", "royal", "prince", "noble", "knight"]),
    ("royal woman", ["queen", "princess", "royal", "regal", "sovereign"]),
    ("royal boy", ["boy", "prince", "royal", "king", "baby"]),
    ("royal girl", ["princess", "queen", "lady", "royal", "belle"]),
    ("good", ["fine", "good", "great", "right", "solid"]),
    ("bad", ["bad", "dirty", "awful", "ugly", "nasty"]),
    ("not good", ["bad", "poor", "wrong", "awful", "terrible"]),
    ("not bad", ["okay", "fair", "good", "fine", "ok"]),
    ("Star wars", ["jedi", "star", "trek", "galaxy", "saga"]),
    ("Star wars in America", ["jedi", "western", "fan", "hollywood", "movie"]),
    ("Star wars in Europe", ["trek", "space", "adventure", "cinema", "fantas"]),
    ("Star wars in Japan", ["godzilla", "anime", "gundam", "jedi", "manga"]),
    ("captain america", ["marvel", "hero", "thor", "superhero", "hulk"]),
]


# DefSent, Table 5 (Appendix B): the learning rate each (model, pooling) was trained with, as the
# exponent x of 2^x x 1e-6, and the std over 10 seeds of Table 2's MRR, top-1, top-3, top-10.
TABLE5_LR_X = {
    ("BERT-base", "CLS"): 2.5,
    ("BERT-base", "Mean"): 3.5,
    ("BERT-base", "Max"): 3.5,
    ("BERT-large", "CLS"): 2.5,
    ("BERT-large", "Mean"): 3.5,
    ("BERT-large", "Max"): 3.0,
    ("RoBERTa-base", "CLS"): 2.5,
    ("RoBERTa-base", "Mean"): 3.0,
    ("RoBERTa-base", "Max"): 2.0,
    ("RoBERTa-large", "CLS"): 2.0,
    ("RoBERTa-large", "Mean"): 2.0,
    ("RoBERTa-large", "Max"): 2.5,
}

TABLE5_STD = {
    ("BERT-base", "CLS"): [0.0020, 0.0021, 0.0029, 0.0022],
    ("BERT-base", "Mean"): [0.0021, 0.0030, 0.0038, 0.0029],
    ("BERT-base", "Max"): [0.0021, 0.0026, 0.0023, 0.0045],
    ("BERT-large", "CLS"): [0.0043, 0.0047, 0.0059, 0.0054],
    ("BERT-large", "Mean"): [0.0044, 0.0045, 0.0055, 0.0072],
    ("BERT-large", "Max"): [0.0138, 0.0113, 0.0172, 0.0181],
    ("RoBERTa-base", "CLS"): [0.0016, 0.0016, 0.0027, 0.0017],
    ("RoBERTa-base", "Mean"): [0.0017, 0.0014, 0.0029, 0.0022],
    ("RoBERTa-base", "Max"): [0.0037, 0.0039, 0.0050, 0.0064],
    ("RoBERTa-large", "CLS"): [0.0040, 0.0045, 0.0044, 0.0041],
    ("RoBERTa-large", "Mean"): [0.0041, 0.0053, 0.0042, 0.0036],
    ("RoBERTa-large", "Max"): [0.0069, 0.0054, 0.0087, 0.0092],
}
