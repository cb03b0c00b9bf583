"""The papers' names for models and poolings, shared by the three papers' tables."""

# Hub names -> the papers' model labels.
MODEL_LABELS = {
    "bert-base-uncased": "BERT-base",
    "bert-large-uncased": "BERT-large",
    "roberta-base": "RoBERTa-base",
    "roberta-large": "RoBERTa-large",
}

# Our pooling names -> the papers'.
POOLING_LABELS = {"cls": "CLS", "mean": "Mean", "max": "Max", "prompt": "Prompt"}
