"""SentEval-style transfer tasks scored with L2-regularised logistic regression.

Protocols follow SentEval's defaults (tools/validation.py):
- MR, CR, SUBJ, MPQA: k-fold cross-validation, the C of each outer fold chosen by an
  inner k-fold over C in {2^-2 .. 2^3};
- TREC, MRPC: k-fold over C in {2^-1 .. 2^5} on train, refit, score the test set
  (MRPC features [|u - v|, u * v]);
- SST-2: C in {2^-2 .. 2^3} chosen on dev, score test.
Accuracy in %. Two classifiers with the same objective (scikit-learn's LogisticRegression):
`classifier="batched"` fits every fold and every C of a task at once (`logreg.fit_many`, on the
GPU when there is one); `classifier="sklearn"` fits them one by one with scikit-learn's L-BFGS
(the reference). `classifier="senteval_torch"` is the classifier the papers ran: SentEval's
torch logistic regression (Adam, batch 64, early stopping on a dev set, tenacity 5, epoch_size 4)
with its weight-decay grid {1e-5 .. 1e-2}, every fit of a task at once (`logreg.fit_many_adam`).
SentEval rounds mean accuracies to 2 decimals (in %) before choosing; so do we.
"""

import warnings

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from defsent_lite.checks import require_finite
from defsent_lite.runtime import config
from defsent_lite.data import eval_readers
from defsent_lite.evaluation import logreg
from defsent_lite.evaluation.sts import as_numpy

TASKS = ["MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC"]
CLASSIFIERS = ("batched", "sklearn", "senteval_torch")
C_INNER = [2.0**t for t in range(-2, 4)]  # InnerKFold and Split classifiers
C_KFOLD = [2.0**t for t in range(-1, 6)]  # KFold classifier (TREC, MRPC)
L2REGS = [10.0**t for t in range(-5, -1)]  # the torch classifier's weight decay, every protocol
TORCH_CLASSIFIER_DTYPE = torch.float32  # SentEval's; tests compare with a float64 reference


def search_grid(classifier, kfold_protocol, search=True):
    """The values SentEval searches (C of logistic regression, or the torch classifier's weight
    decay); without a search, the classifier's own default (C = 1, weight decay 0)."""
    if classifier == "senteval_torch":
        return L2REGS if search else [0.0]
    if not search:
        return [1.0]
    return C_KFOLD if kfold_protocol else C_INNER


def selection_score(accuracies):
    """Mean accuracy in % rounded to 2 decimals, as SentEval compares the values of its grid."""
    return round(100 * float(np.mean(accuracies)), 2)


def fit_score(X_train, y_train, X_test, y_test, C, seed):
    """Accuracy (0-1) of a logistic regression with inverse L2 strength C."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LogisticRegression(C=C, max_iter=1000, random_state=seed).fit(X_train, y_train)
    return clf.score(X_test, y_test)


def best_c_by_cv(X, y, grid, kfold, seed):
    """The C of `grid` with the highest mean k-fold accuracy."""
    folds = stratified_folds(y, kfold, seed)
    means = [
        selection_score([fit_score(X[tr], y[tr], X[te], y[te], C, seed) for tr, te in folds])
        for C in grid
    ]
    return grid[int(np.argmax(means))]


def nested_cv_accuracy(X, y, kfold=10, seed=1111, inner_search=True, classifier="batched"):
    """MR/CR/SUBJ/MPQA: outer k-fold; each fold's C from an inner k-fold (or C=1 when off)."""
    if classifier != "sklearn":
        return batched_nested_cv_accuracy(X, y, kfold, seed, inner_search, classifier)
    scores = []
    for tr, te in stratified_folds(y, kfold, seed):
        C = best_c_by_cv(X[tr], y[tr], C_INNER, kfold, seed) if inner_search else 1.0
        scores.append(fit_score(X[tr], y[tr], X[te], y[te], C, seed))
    return 100.0 * float(np.mean(scores))


def cv_then_test_accuracy(
    X_train, y_train, X_test, y_test, kfold=10, seed=1111, search=True, classifier="batched"
):
    """TREC/MRPC: choose C by k-fold on train, refit on all train, score test."""
    if classifier != "sklearn":
        return batched_cv_then_test_accuracy(
            X_train, y_train, X_test, y_test, kfold, seed, search, classifier
        )
    C = best_c_by_cv(X_train, y_train, C_KFOLD, kfold, seed) if search else 1.0
    return 100.0 * fit_score(X_train, y_train, X_test, y_test, C, seed)


def dev_then_test_accuracy(
    X_train, y_train, X_dev, y_dev, X_test, y_test, seed=1111, search=True, classifier="batched"
):
    """SST-2: choose C on dev, score test."""
    if classifier != "sklearn":
        return batched_dev_then_test_accuracy(
            X_train, y_train, X_dev, y_dev, X_test, y_test, search, classifier
        )
    dev = lambda c: selection_score([fit_score(X_train, y_train, X_dev, y_dev, c, seed)])  # noqa: E731
    C = C_INNER[int(np.argmax([dev(c) for c in C_INNER]))] if search else 1.0
    return 100.0 * fit_score(X_train, y_train, X_test, y_test, C, seed)


# ---------------------------------------------------------------- the same protocols, batched


class Problems:
    """Training rows, regularisation and dev rows of a protocol's fits, all fitted in one batch."""

    def __init__(self, n, classifier="batched"):
        self.n, self.classifier, self.rows, self.regs, self.devs = n, classifier, [], [], []

    def add(self, train_rows, reg, dev_rows=None):
        """A fit on train_rows with C (or weight decay) `reg`; dev_rows: the torch classifier's
        early-stopping set (None: a 5% split of train_rows, as SentEval's refits). Its index."""
        self.rows.append(np.asarray(train_rows))
        self.regs.append(reg)
        self.devs.append(dev_rows)
        return len(self.regs) - 1

    def predict(self, X, y):
        """[P, n] predicted labels of every row under every problem's fit (on the GPU when
        present)."""
        device = config.device()
        n_classes = int(y.max()) + 1
        if self.classifier == "senteval_torch":
            X = torch.as_tensor(X, dtype=TORCH_CLASSIFIER_DTYPE, device=device)
            fits = logreg.fit_many_adam(
                X, torch.as_tensor(y, device=device), self.rows, self.devs, self.regs, n_classes
            )
            return fits.predict(X).cpu().numpy()
        masks = np.zeros((len(self.rows), self.n), bool)
        for p, rows in enumerate(self.rows):
            masks[p, rows] = True
        dtype = torch.float64 if device.type == "cpu" else torch.float32
        fits = logreg.fit_many(
            torch.as_tensor(X, dtype=dtype, device=device),
            torch.as_tensor(y, device=device),
            torch.as_tensor(masks, device=device),
            self.regs,
            n_classes=n_classes,
        )
        return fits.predict().cpu().numpy()


def accuracy(predicted, y, problem, rows):
    return float((predicted[problem, rows] == y[rows]).mean())


def stratified_folds(y, kfold, seed):
    """SentEval's shuffled stratified folds; both classifiers use these."""
    return list(
        StratifiedKFold(n_splits=kfold, shuffle=True, random_state=seed).split(np.zeros(len(y)), y)
    )


def add_cv_search(problems, rows, y, grid, kfold, seed):
    """Problems of a k-fold search over `grid` on `rows` (the folds best_c_by_cv makes; each
    held-out fold is also the torch classifier's dev set): {value: [(problem, held-out rows)]}."""
    folds = stratified_folds(y[rows], kfold, seed)
    return {C: [(problems.add(rows[tr], C, rows[te]), rows[te]) for tr, te in folds] for C in grid}


def chosen(search, predicted, y, grid):
    """The value with the highest mean held-out accuracy (rounded as SentEval; the first on
    ties)."""
    means = [
        selection_score([accuracy(predicted, y, p, rows) for p, rows in search[C]]) for C in grid
    ]
    return grid[int(np.argmax(means))]


def batched_nested_cv_accuracy(X, y, kfold=10, seed=1111, inner_search=True, classifier="batched"):
    """nested_cv_accuracy with all outer folds x C x inner folds (and every outer refit) in one
    batch."""
    problems, grid = Problems(len(y), classifier), search_grid(classifier, False, inner_search)
    outer = []
    for tr, te in stratified_folds(y, kfold, seed):
        search = add_cv_search(problems, tr, y, grid, kfold, seed) if inner_search else None
        outer.append((search, {C: problems.add(tr, C) for C in grid}, te))
    predicted = problems.predict(X, y)
    return 100.0 * float(
        np.mean(
            [
                accuracy(
                    predicted,
                    y,
                    refit[chosen(search, predicted, y, grid) if search else grid[0]],
                    te,
                )
                for search, refit, te in outer
            ]
        )
    )


def batched_cv_then_test_accuracy(
    X_train, y_train, X_test, y_test, kfold=10, seed=1111, search=True, classifier="batched"
):
    """cv_then_test_accuracy with the k-fold search and every refit in one batch."""
    X, y = np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])
    train, test = np.arange(len(y_train)), np.arange(len(y_train), len(y))
    problems, grid = Problems(len(y), classifier), search_grid(classifier, True, search)
    folds = add_cv_search(problems, train, y, grid, kfold, seed) if search else None
    refit = {C: problems.add(train, C) for C in grid}
    predicted = problems.predict(X, y)
    return 100.0 * accuracy(
        predicted, y, refit[chosen(folds, predicted, y, grid) if search else grid[0]], test
    )


def batched_dev_then_test_accuracy(
    X_train, y_train, X_dev, y_dev, X_test, y_test, search=True, classifier="batched"
):
    """dev_then_test_accuracy: one fit per value (the dev set also early-stops the torch
    classifier), chosen on dev, scored on test (SentEval's refit is the same seeded fit)."""
    X, y = np.vstack([X_train, X_dev, X_test]), np.concatenate([y_train, y_dev, y_test])
    a, b = len(y_train), len(y_train) + len(y_dev)
    problems, grid = Problems(len(y), classifier), search_grid(classifier, False, search)
    fits = [problems.add(np.arange(a), C, np.arange(a, b)) for C in grid]
    predicted = problems.predict(X, y)
    best = int(
        np.argmax([selection_score([accuracy(predicted, y, p, np.arange(a, b))]) for p in fits])
    )
    return 100.0 * accuracy(predicted, y, fits[best], np.arange(b, len(y)))


def subset(n, max_examples, seed):
    """Indices of a seeded random subset (all when max_examples is None)."""
    if not max_examples or n <= max_examples:
        return np.arange(n)
    return np.sort(np.random.RandomState(seed).permutation(n)[:max_examples])


def pick(items, idx):
    return [items[i] for i in idx]


def capped(splits, max_examples, max_eval, seed):
    """{split: columns} with train cut to max_examples and dev/test to max_eval (seeded subsets),
    each split in SentEval's order (senteval_sorted)."""
    out = {}
    for name, columns in splits.items():
        idx = subset(len(columns[0]), max_examples if name == "train" else max_eval, seed)
        out[name] = senteval_sorted(*(pick(col, idx) for col in columns))
    return out


def senteval_sorted(*columns):
    """(sentences..., labels) rows in the order SentEval sorts a task before encoding it and
    cutting its folds: by each sentence's word count, then the label (a stable sort)."""
    *texts, labels = columns
    order = sorted(
        range(len(labels)), key=lambda i: (*(len(t[i].split()) for t in texts), labels[i])
    )
    return tuple([col[i] for i in order] for col in columns)


def embed_many(embed, sentences):
    """Embed distinct sentences once; rows in the order given."""
    unique = list(dict.fromkeys(sentences))
    vectors = require_finite(as_numpy(embed(unique)), "SentEval sentence embeddings")
    row = {s: i for i, s in enumerate(unique)}
    return vectors[[row[s] for s in sentences]]


def embed_parts(embed, *parts):
    """Embed several sentence lists in one call (distinct sentences once); one matrix per list.
    An empty line is encoded as "." (SentEval's batcher; CR and MPQA hold 7 such lines)."""
    X = embed_many(embed, [s if s.split() else "." for part in parts for s in part])
    bounds = np.cumsum([0] + [len(p) for p in parts])
    return [X[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def evaluate_task(
    task,
    embed,
    data_dir=None,
    kfold=10,
    inner_search=True,
    max_examples=None,
    seed=1111,
    max_eval=None,
    classifier="batched",
):
    """Accuracy (%) on one task; max_examples caps the training data, max_eval the dev and test
    sets of SST-2, TREC and MRPC (smoke runs; seeded subsets); classifier: one of CLASSIFIERS.

    Each task's sentences go to `embed` in one call (see `evaluate_each`)."""
    if classifier not in CLASSIFIERS:
        raise ValueError(f"unknown SentEval classifier {classifier!r}; choose from {CLASSIFIERS}")
    if task in eval_readers.BINARY_FILES:
        sents, labels = eval_readers.load_binary_task(task, data_dir)
        idx = subset(len(sents), max_examples, seed)
        sents, labels = senteval_sorted(pick(sents, idx), pick(labels, idx))
        (X,) = embed_parts(embed, sents)
        return nested_cv_accuracy(X, np.array(labels), kfold, seed, inner_search, classifier)
    if task == "SST2":
        d = capped(eval_readers.load_sst2(data_dir), max_examples, max_eval, seed)
        Xtr, Xdv, Xte = embed_parts(embed, d["train"][0], d["dev"][0], d["test"][0])
        return dev_then_test_accuracy(
            Xtr,
            np.array(d["train"][1]),
            Xdv,
            np.array(d["dev"][1]),
            Xte,
            np.array(d["test"][1]),
            seed,
            inner_search,
            classifier,
        )
    if task == "TREC":
        d = capped(eval_readers.load_trec(data_dir), max_examples, max_eval, seed)
        Xtr, Xte = embed_parts(embed, d["train"][0], d["test"][0])
        return cv_then_test_accuracy(
            Xtr,
            np.array(d["train"][1]),
            Xte,
            np.array(d["test"][1]),
            kfold,
            seed,
            inner_search,
            classifier,
        )
    if task == "MRPC":
        d = capped(eval_readers.load_mrpc(data_dir), max_examples, max_eval, seed)
        ua, ub, va, vb = embed_parts(
            embed, d["train"][0], d["train"][1], d["test"][0], d["test"][1]
        )
        return cv_then_test_accuracy(
            pair_features(ua, ub),
            np.array(d["train"][2]),
            pair_features(va, vb),
            np.array(d["test"][2]),
            kfold,
            seed,
            inner_search,
            classifier,
        )
    raise ValueError(f"unknown transfer task {task!r}; choose from {TASKS}")


def pair_features(u, v):
    """[|u - v|, u * v] of the two sentences' vectors of each pair (SentEval's MRPC features)."""
    return np.hstack([np.abs(u - v), u * v])


def evaluate(
    embed,
    tasks=None,
    data_dir=None,
    kfold=10,
    inner_search=True,
    max_examples=None,
    seed=1111,
    max_eval=None,
    classifier="batched",
):
    """{task: accuracy %} plus 'avg'. `embed(list[str]) -> [n, d]`; CR and MPQA hold 7 empty
    lines, which SentEval keeps and encodes as "." (embed_parts does the same)."""
    return evaluate_each(
        {"_": embed}, tasks, data_dir, kfold, inner_search, max_examples, seed, max_eval, classifier
    )["_"]


def evaluate_each(
    embeds,
    tasks=None,
    data_dir=None,
    kfold=10,
    inner_search=True,
    max_examples=None,
    seed=1111,
    max_eval=None,
    classifier="batched",
):
    """{name: scores} for several embed functions, task by task, so that `encode.embedders`'
    poolings share one forward pass over each task's sentences."""
    out = {name: {} for name in embeds}
    for task in tasks or TASKS:
        for name, embed in embeds.items():
            out[name][task] = evaluate_task(
                task, embed, data_dir, kfold, inner_search, max_examples, seed, max_eval, classifier
            )
    for scores in out.values():
        scores["avg"] = float(np.mean(list(scores.values())))
    return out
