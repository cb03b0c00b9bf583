"""SentEval-style transfer tasks scored with L2-regularised logistic regression.

Protocols follow SentEval's defaults (tools/validation.py):
- MR, CR, SUBJ, MPQA: k-fold cross-validation, the C of each outer fold chosen by an
  inner k-fold over C in {2^-2 .. 2^3};
- TREC, MRPC: k-fold over C in {2^-1 .. 2^5} on train, refit, score the test set
  (MRPC features [|u - v|, u * v]);
- SST-2: C in {2^-2 .. 2^3} chosen on dev, score test.
Accuracy in %. `classifier="batched"` minimises scikit-learn's LogisticRegression objective for
every fold and every C of a task at once (`fit_many`, on the GPU when there is one; the tests
check it against scikit-learn fitted one by one). `classifier="senteval_torch"` is the classifier
the papers ran: SentEval's torch logistic regression (Adam, batch 64, early stopping on a dev set,
tenacity 5, epoch_size 4) with its weight-decay grid {1e-5 .. 1e-2}, every fit of a task at once
(`fit_many_adam`).
SentEval rounds mean accuracies to 2 decimals (in %) before choosing; so do we. Below the tasks:
the batched classifiers, then an encoder's scores cached per pooling (as evaluation/sts caches
STS). scikit-learn loads where SentEval runs, not with this module.
"""

from typing import NamedTuple

import numpy as np
import pandas as pd
import torch

from defsent_lite import encode
from defsent_lite.checks import NonFinite, require_finite
from defsent_lite.data import eval_readers
from defsent_lite.evaluation import sts
from defsent_lite.evaluation.sts import as_numpy
from defsent_lite.runtime import cache, config, models

TASKS = ["MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC"]
CLASSIFIERS = ("batched", "senteval_torch")
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


# ---------------------------------------------------------------- the protocols, every fit batched


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
            fits = fit_many_adam(
                X, torch.as_tensor(y, device=device), self.rows, self.devs, self.regs, n_classes
            )
            return fits.predict(X).cpu().numpy()
        masks = np.zeros((len(self.rows), self.n), bool)
        for p, rows in enumerate(self.rows):
            masks[p, rows] = True
        dtype = torch.float64 if device.type == "cpu" else torch.float32
        fits = fit_many(
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
    from sklearn.model_selection import StratifiedKFold  # scikit-learn loads where SentEval runs

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


def nested_cv_accuracy(X, y, kfold=10, seed=1111, inner_search=True, classifier="batched"):
    """MR/CR/SUBJ/MPQA: outer k-fold, each fold's C from an inner k-fold (or C=1 when off); all
    outer folds x C x inner folds (and every outer refit) in one batch."""
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


def cv_then_test_accuracy(
    X_train, y_train, X_test, y_test, kfold=10, seed=1111, search=True, classifier="batched"
):
    """TREC/MRPC: C chosen by k-fold on train, refit on all train, test scored; the search and
    every refit in one batch."""
    X, y = np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])
    train, test = np.arange(len(y_train)), np.arange(len(y_train), len(y))
    problems, grid = Problems(len(y), classifier), search_grid(classifier, True, search)
    folds = add_cv_search(problems, train, y, grid, kfold, seed) if search else None
    refit = {C: problems.add(train, C) for C in grid}
    predicted = problems.predict(X, y)
    return 100.0 * accuracy(
        predicted, y, refit[chosen(folds, predicted, y, grid) if search else grid[0]], test
    )


def dev_then_test_accuracy(
    X_train, y_train, X_dev, y_dev, X_test, y_test, search=True, classifier="batched"
):
    """SST-2: one fit per value (the dev set also early-stops the torch classifier), chosen on
    dev, scored on test (SentEval's refit is the same seeded fit)."""
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


# ------------------------------------------------------------ many logistic regressions at once
#
# Many logistic regressions on one feature matrix, fitted at once: SentEval's protocols fit
# hundreds of small problems per task (every fold x every C or weight decay); here they are one
# batched computation, by either of two classifiers.
#
# 1. scikit-learn's objective (`fit_many`): problem p minimises it in its mean form
#
#     f_p(w, b) = (1 / n_p) sum_{i in train_p} loss(x_i w + b, y_i) + ||w||^2 / (2 C_p n_p)
#
# (binary: logistic loss, one weight vector; K > 2 classes: softmax cross-entropy, K vectors; the
# intercept is not penalised), whose minimum is the same as LogisticRegression(C=C_p)'s. Solver:
# truncated Newton (Hessian-vector products, preconditioned conjugate gradients, Armijo
# backtracking), batched over problems and run until every problem's largest gradient entry is
# below `tol` (scikit-learn's L-BFGS stops at 1e-4). The features are centred and rotated onto
# the eigenvectors of their Gram matrix first (the L2 penalty is unchanged by a rotation and the
# centring is absorbed by the unpenalised intercept, so the minimum is the same), which makes the
# Hessian close to diagonal; its exact diagonal is the preconditioner.
#
# 2. SentEval's PyTorch classifier (`fit_many_adam`; nhid=0: one linear layer trained by Adam with
# early stopping). SentEval (tools/classifier.py, the papers' setting: Adam lr 1e-3, batch 64, tenacity 5,
# epoch_size 4, max_epoch 200) fits every problem from a fresh seed: nn.Linear's initial weights
# after torch.manual_seed(seed); numpy permutations after np.random.seed(seed), a 5% dev split
# first when it is given no dev set, then one permutation per epoch; minibatches of 64 with the
# mean cross-entropy; Adam with weight decay l2reg on weight and bias. Every epoch_size epochs it
# scores the dev set, keeps the model of the best accuracy (strictly better only) and stops after
# tenacity + 1 rounds without improvement, or once past max_epoch. Here each problem follows that
# schedule exactly, with its own rows, and all problems take their step together.


class Fits(NamedTuple):
    # [D + 1, P, K] in the rotated basis (last row: intercepts); K = 1 for binary
    weights: torch.Tensor
    objective: torch.Tensor  # [P] f_p at the solution
    grad_max: torch.Tensor  # [P] largest |gradient| entry at the solution
    newton_steps: int
    basis: "Basis"

    def predict(self):
        """[P, n] predicted class of every row of the fitted matrix under every problem."""
        return predict_labels(self.basis.features @ self.weights.flatten(1), self.weights.shape[1:])

    def coefficients(self):
        """(coef [P, K, d], intercept [P, K]) in the original features, as scikit-learn's coef_ and
        intercept_."""
        coef = torch.einsum("de,epk->pkd", self.basis.rotation, self.weights[:-1])
        intercept = self.weights[-1] - torch.einsum("d,pkd->pk", self.basis.mean, coef)
        if (
            intercept.shape[1] > 1
        ):  # softmax intercepts are defined up to a constant: sum zero, as scikit-learn's
            intercept = intercept - intercept.mean(1, keepdim=True)
        return coef, intercept


class Basis(NamedTuple):
    features: torch.Tensor  # [n, D + 1]: centred, rotated features and a column of ones
    mean: torch.Tensor  # [d] the mean that was subtracted
    rotation: torch.Tensor  # [d, D] eigenvectors of the centred Gram matrix


def rotated_basis(X):
    """Centred features rotated onto the eigenvectors of their Gram matrix, plus an intercept
    column."""
    mean = X.mean(0)
    _, vectors = torch.linalg.eigh((X - mean).T @ (X - mean))
    ones = torch.ones(len(X), 1, dtype=X.dtype, device=X.device)
    return Basis(torch.cat([(X - mean) @ vectors, ones], 1), mean, vectors)


def predict_labels(logits, shape):
    """Class ids from [n, P*K] logits (K = 1: sigmoid > 0)."""
    z = logits.view(-1, *shape)
    labels = (z[..., 0] > 0).long() if shape[1] == 1 else z.argmax(-1)
    return labels.T


def problem_weights(train_masks, y, n_classes, dtype):
    """(weight [n, P]: each problem's rows weighted 1/its count, so a loss is a mean; n_p [P]: the
    counts); a problem with no rows, or rows of one class only, is an error naming it."""
    weight = train_masks.to(dtype).T  # [n, P]
    n_p = weight.sum(0)
    if (n_p == 0).any():
        raise ValueError(
            f"logistic regression: problems {(n_p == 0).nonzero().flatten().tolist()[:10]} have "
            "no training rows"
        )
    # [P, classes]
    per_class = train_masks.to(dtype) @ torch.nn.functional.one_hot(y, n_classes).to(dtype)
    if ((per_class > 0).sum(1) < 2).any():
        raise ValueError(
            "logistic regression: problems "
            f"{((per_class > 0).sum(1) < 2).nonzero().flatten().tolist()[:10]} "
            "have training rows of one class only (as scikit-learn, this needs at least two)"
        )
    return weight / n_p, n_p


def fit_many(
    X, y, train_masks, Cs, n_classes=None, tol=1e-5, max_newton=100, max_cg=50, basis=None
):
    """Fit problem p on the rows where train_masks[p] is True with inverse strength Cs[p].

    X [n, d] float, y [n] class ids, train_masks [P, n] bool, Cs [P]. Runs on X's device and dtype.
    Raises RuntimeError naming the problems that did not reach `tol` within max_newton steps."""
    require_finite(X, "logistic regression features")
    device, dtype = X.device, X.dtype
    n_classes = n_classes or int(y.max()) + 1
    K = 1 if n_classes == 2 else n_classes
    basis = rotated_basis(X) if basis is None else basis
    A = basis.features
    P, D1 = len(train_masks), A.shape[1]
    weight, n_p = problem_weights(train_masks, y, n_classes, dtype)
    Y = (
        (y == 1).to(dtype)[:, None, None]
        if K == 1
        else torch.nn.functional.one_hot(y, K).to(dtype)[:, None, :]
    )
    penalty = torch.ones(D1, 1, 1, dtype=dtype, device=device)
    penalty[-1] = 0
    # [D1, P, 1]
    reg = penalty / (torch.as_tensor(Cs, dtype=dtype, device=device) * n_p)[None, :, None]
    W = torch.zeros(D1, P, K, dtype=dtype, device=device)

    def logits(W):
        return (A @ W.flatten(1)).view(-1, P, K)

    def objective(Z, W):
        if K == 1:
            per_row = torch.nn.functional.softplus(Z[..., 0]) - Y[..., 0] * Z[..., 0]
        else:
            per_row = torch.logsumexp(Z, -1) - (Y * Z).sum(-1)
        return (weight * per_row).sum(0) + 0.5 * (reg * W * W).sum((0, 2))

    for step in range(max_newton + 1):
        Z = logits(W)
        S = torch.sigmoid(Z) if K == 1 else torch.softmax(Z, -1)
        grad = (A.T @ ((S - Y) * weight[..., None]).flatten(1)).view(D1, P, K) + reg * W
        grad_max = grad.abs().amax((0, 2))
        active = grad_max > tol
        if not active.any():
            break
        if step == max_newton:
            bad = active.nonzero().flatten().tolist()
            raise RuntimeError(
                f"logistic regression did not converge in {max_newton} Newton steps: problems "
                f"{bad[:10]} (largest gradient {float(grad_max.max()):.2e} > tol {tol:g})"
            )
        curv = S * (1 - S) if K == 1 else S

        def hess_vec(V):
            Q = logits(V)
            if K == 1:
                R = curv * Q
            else:
                R = curv * (Q - (curv * Q).sum(-1, keepdim=True))
            return (A.T @ (R * weight[..., None]).flatten(1)).view(D1, P, K) + reg * V

        diag = (weight[..., None] * (curv * (1 - curv) if K > 1 else curv)).flatten(1)  # [n, P*K]
        # Hessian diagonal
        precond = ((A * A).T.matmul(diag).view(D1, P, K) + reg).clamp_min(torch.finfo(dtype).tiny)
        direction = conjugate_gradients(hess_vec, -grad * active[None, :, None], precond, max_cg)
        W = line_search(W, direction, grad, objective(Z, W), lambda W: objective(logits(W), W))
    final = objective(logits(W), W)
    if not torch.isfinite(final).all():
        raise NonFinite(
            "logistic regression: non-finite objective for problems "
            f"{(~torch.isfinite(final)).nonzero().flatten().tolist()[:10]} (non-finite features?)"
        )
    return Fits(W, final, grad_max, step, basis)


def conjugate_gradients(hess_vec, b, precond, max_iter, rel_tol=0.1):
    """Approximate solutions of H x = b per problem (dim 1 of [D, P, K] tensors), preconditioned."""
    x = torch.zeros_like(b)
    r = b.clone()
    z = r / precond
    p = z.clone()
    rz = (r * z).sum((0, 2))
    target = rel_tol * b.pow(2).sum((0, 2)).sqrt()
    for _ in range(max_iter):
        Hp = hess_vec(p)
        pHp = (p * Hp).sum((0, 2))
        alpha = torch.where(
            pHp > 0, rz / pHp.clamp_min(torch.finfo(b.dtype).tiny), torch.zeros_like(pHp)
        )
        x = x + alpha[None, :, None] * p
        r = r - alpha[None, :, None] * Hp
        if (r.pow(2).sum((0, 2)).sqrt() <= target).all():
            break
        z = r / precond
        rz_new = (r * z).sum((0, 2))
        beta = torch.where(
            rz > 0, rz_new / rz.clamp_min(torch.finfo(b.dtype).tiny), torch.zeros_like(rz)
        )
        p = z + beta[None, :, None] * p
        rz = rz_new
    return x


def line_search(W, direction, grad, f0, objective, shrink=0.5, c=1e-4, max_halvings=30):
    """Armijo backtracking per problem: the largest step 1, 1/2, 1/4, ... that decreases f
    enough."""
    slope = (grad * direction).sum((0, 2))
    step = torch.ones_like(f0)
    for _ in range(max_halvings):
        trial = W + step[None, :, None] * direction
        ok = objective(trial) <= f0 + c * step * slope
        if ok.all():
            return trial
        step = torch.where(ok, step, step * shrink)
    return W + torch.where(ok, step, torch.zeros_like(step))[None, :, None] * direction


# ---------------------------------------------------------------- SentEval's PyTorch classifier, batched


class AdamSettings(NamedTuple):
    """SentEval's classifier settings (its MLP defaults; the papers' `params['classifier']`)."""

    batch_size: int = 64
    tenacity: int = 5
    epoch_size: int = 4
    max_epoch: int = 200
    lr: float = 1e-3
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    validation_split: float = 0.05


class AdamFits(NamedTuple):
    weight: torch.Tensor  # [P, d, K] the best model of each problem (dev accuracy)
    bias: torch.Tensor  # [P, K]
    dev_accuracy: torch.Tensor  # [P] its dev accuracy (0-1)
    epochs: torch.Tensor  # [P] epochs trained before stopping

    def predict(self, X):
        """[P, n] predicted class of every row of X under every problem's best model."""
        logits = X @ self.weight.permute(1, 0, 2).flatten(1) + self.bias.flatten()
        return logits.view(len(X), *self.bias.shape).argmax(-1).T


def initial_layer(d, n_classes, seed):
    """nn.Linear(d, K)'s weights right after torch.manual_seed(seed), as SentEval's MLP starts
    (drawn on the CPU generator, whose state is restored afterwards)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = torch.nn.Linear(d, n_classes)
    return layer.weight.detach().T.contiguous(), layer.bias.detach().clone()


def split_rows(train_rows, dev_rows, seed, fraction):
    """(train rows in SentEval's order, dev rows, the numpy generator the epochs continue from)."""
    rng = np.random.RandomState(seed)
    rows = np.asarray(train_rows)
    if dev_rows is not None:
        return rows, np.asarray(dev_rows), rng
    order = rng.permutation(len(rows))
    cut = int(fraction * len(rows))
    return rows[order[cut:]], rows[order[:cut]], rng


def padded(arrays, device):
    """[P, longest] long tensor of the row arrays, padded with -1."""
    out = np.full((len(arrays), max(len(a) for a in arrays)), -1, dtype=np.int64)
    for p, a in enumerate(arrays):
        out[p, : len(a)] = a
    return torch.as_tensor(out, device=device)


def fit_many_adam(
    X, y, train_rows, dev_rows, l2regs, n_classes, settings=AdamSettings(), seed=1111
):
    """Problem p: SentEval's classifier on rows train_rows[p] (in that order) with weight decay
    l2regs[p], early-stopped on dev_rows[p] (None: a seeded 5% split of its train rows, as
    SentEval's refits). X [n, d] float tensor (its device and dtype are used), y [n] class ids."""
    require_finite(X, "SentEval classifier features")
    device, dtype, P = X.device, X.dtype, len(train_rows)
    splits = [
        split_rows(tr, dv, seed, settings.validation_split) for tr, dv in zip(train_rows, dev_rows)
    ]
    if any(len(tr) == 0 or len(dv) == 0 for tr, dv, _ in splits):
        raise ValueError("SentEval classifier: a problem has no training or no dev rows")
    W0, b0 = initial_layer(X.shape[1], n_classes, seed)
    model = Trainee.start(W0.to(device, dtype), b0.to(device, dtype), P)
    best = AdamFits(
        model.W.clone(),
        model.b.clone(),
        torch.full((P,), -1.0, dtype=dtype, device=device),
        torch.zeros(P, dtype=torch.long, device=device),
    )
    dev = padded([dv for _, dv, _ in splits], device)
    decay = torch.as_tensor(l2regs, dtype=dtype, device=device)
    running = torch.ones(P, dtype=torch.bool, device=device)
    misses = torch.zeros(P, dtype=torch.long, device=device)
    streams = Streams(splits, [dv is not None for dv in dev_rows])
    epoch = 0
    while bool(running.any()):
        act = running.nonzero().flatten()
        part = model.take(act)  # the running problems' parameters and Adam state, contiguous
        for _ in range(settings.epoch_size):
            order = padded(streams.next_epoch(act.tolist()), device)
            train_epoch(X, y, order, part, decay[act], settings)
        model.put(act, part)
        epoch += settings.epoch_size
        accuracy = dev_accuracy(X, y, part.W, part.b, dev[act])
        improved = accuracy > best.dev_accuracy[act]
        better = act[improved]
        best.weight[better], best.bias[better] = part.W[improved], part.b[improved]
        best.dev_accuracy[better] = accuracy[improved]
        worse = act[~improved]
        running[worse[misses[worse] >= settings.tenacity]] = False
        misses[worse] += 1
        best.epochs[act] = epoch
        if epoch > settings.max_epoch:
            running[:] = False
    require_finite(best.weight, "SentEval classifier weights")
    return best


class Trainee(NamedTuple):
    """Each problem's linear layer and torch.optim.Adam's state for it (step count, both
    moments)."""

    W: torch.Tensor  # [P, d, K]
    b: torch.Tensor  # [P, K]
    steps: torch.Tensor  # [P]
    m_w: torch.Tensor
    v_w: torch.Tensor
    m_b: torch.Tensor
    v_b: torch.Tensor

    @staticmethod
    def start(W0, b0, P):
        W, b = W0.expand(P, -1, -1).clone(), b0.expand(P, -1).clone()
        return Trainee(
            W,
            b,
            torch.zeros(P, dtype=W.dtype, device=W.device),
            torch.zeros_like(W),
            torch.zeros_like(W),
            torch.zeros_like(b),
            torch.zeros_like(b),
        )

    def take(self, rows):
        return Trainee(*(t[rows] for t in self))

    def put(self, rows, part):
        for whole, sub in zip(self, part):
            whole[rows] = sub


class Streams:
    """The numpy permutation stream of each problem. Every problem starts from the same seed, so
    problems with the same train size and split draw the same permutations: each distinct stream
    is drawn once per epoch."""

    def __init__(self, splits, dev_given):
        self.rows = [tr for tr, _, _ in splits]
        first = {}
        self.key = [
            first.setdefault((len(tr), len(dv), given), i)
            for i, ((tr, dv, _), given) in enumerate(zip(splits, dev_given))
        ]
        self.rng = {k: splits[k][2] for k in set(self.key)}

    def next_epoch(self, problems):
        """Each problem's train rows in this epoch's order (every running problem is at the same
        epoch)."""
        perms = {
            k: self.rng[k].permutation(len(self.rows[k])) for k in {self.key[p] for p in problems}
        }
        return [self.rows[p][perms[self.key[p]]] for p in problems]


def train_epoch(X, y, order, model, decay, settings):
    """One pass of minibatches for every problem of `model` (order: [P, longest] rows, -1 pads)."""
    B = settings.batch_size
    for start in range(0, order.shape[1], B):
        idx = order[:, start : start + B]
        valid = idx >= 0
        count = valid.sum(1)
        Xb = X[idx.clamp_min(0)]  # [P, B, d]
        probs = torch.softmax(torch.baddbmm(model.b[:, None, :], Xb, model.W), -1)
        target = torch.nn.functional.one_hot(y[idx.clamp_min(0)], probs.shape[-1]).to(probs.dtype)
        # mean cross-entropy
        dlogits = (probs - target) * (valid / count.clamp_min(1)[:, None])[..., None]
        adam_step(model, Xb.transpose(1, 2) @ dlogits, dlogits.sum(1), count > 0, decay, settings)


def adam_step(model, grad_w, grad_b, live, decay, settings):
    """torch.optim.Adam's update (weight decay added to the gradient), in place, for the live
    problems (a problem whose epoch has no batch left keeps its parameters and state)."""
    b1, b2 = settings.betas
    model.steps.add_(live.to(model.steps.dtype))
    t = model.steps.clamp_min(1)
    step_size, root = settings.lr / (1 - b1**t), torch.sqrt(1 - b2**t)
    pairs = ((model.W, grad_w, model.m_w, model.v_w), (model.b, grad_b, model.m_b, model.v_b))
    for param, grad, m, v in pairs:
        shape = (-1,) + (1,) * (param.dim() - 1)
        keep = live.view(shape)
        grad = grad + decay.view(shape) * param
        m.copy_(torch.where(keep, m + (1 - b1) * (grad - m), m))
        v.copy_(torch.where(keep, v * b2 + (1 - b2) * grad * grad, v))
        update = step_size.view(shape) * m / (v.sqrt() / root.view(shape) + settings.eps)
        param.copy_(torch.where(keep, param - update, param))


def dev_accuracy(X, y, W, b, dev):
    """[A] accuracy of each problem's current model on its dev rows (dev: [A, longest], -1 pads)."""
    if not torch.isfinite(W).all():
        raise NonFinite(
            "SentEval classifier: non-finite weights (non-finite features or a diverged fit)"
        )
    valid = dev >= 0
    predicted = AdamFits(W, b, None, None).predict(X).gather(1, dev.clamp_min(0))
    correct = (predicted == y[dev.clamp_min(0)]) & valid
    return correct.sum(1).to(X.dtype) / valid.sum(1).to(X.dtype)


# ------------------------------------------------------------ cached scores of an encoder
# (as loaded or trained, per pooling, under a scale's SentEval settings: notebooks 01, 12, 24, 25)


def untrained_transfer(name_or_path, poolings, scale, data_dir=None, batch_size=64):
    """{pooling: SentEval scores} of the model as loaded, with the scale's transfer settings."""
    settings = transfer_settings(scale)

    def compute(missing):

        model, tokenizer = models.load(name_or_path)
        embeds = encode.embedders(
            model, tokenizer, missing, batch_size=batch_size, allow_empty=True
        )
        return evaluate_each(embeds, data_dir=data_dir, **settings)

    cfg = dict(model=str(name_or_path), data=cache.data_identity(data_dir, "senteval"), **settings)
    return sts.cached_per_pooling("transfer_untrained", cfg, list(poolings), compute)


def transfer_before_after(
    model,
    trained_path,
    pooling,
    scale,
    data_dir=None,
    names=("untrained", "trained"),
    untrained_poolings=None,
):
    """SentEval rows (named `names`, columns: TASKS, avg) of a model as loaded (cached)
    and of an encoder trained from it under `pooling`, with the scale's settings. The model as
    loaded is scored under `pooling`, or under whichever of `untrained_poolings` has the higher
    average (a published row that reports the better of several), named in the table's attrs."""
    batch = scale["encode_batch_size"]
    candidates = untrained_transfer(
        model, list(untrained_poolings or [pooling]), scale, data_dir, batch
    )
    best = max(candidates, key=lambda p: candidates[p]["avg"])
    trained = encoder_transfer(trained_path, pooling, transfer_settings(scale), data_dir, batch)
    rows = [candidates[best], trained]
    table = pd.DataFrame.from_dict(
        {n: [r[c] for c in [*TASKS, "avg"]] for n, r in zip(names, rows)},
        orient="index",
        columns=[*TASKS, "avg"],
    )
    table.attrs["untrained_pooling"] = best
    return table


def encoder_transfer(name_or_path, pooling, settings, data_dir=None, batch_size=64):
    """SentEval scores of an encoder under one pooling and `evaluate` settings."""

    model, tokenizer = models.load(name_or_path)
    embed = encode.embedder(model, tokenizer, pooling, batch_size=batch_size, allow_empty=True)
    return evaluate(embed, data_dir=data_dir, **settings)


def trained_transfer(run, pooling, settings, data_dir=None, batch_size=64):
    """SentEval scores of a trained run's encoder under `settings` (`transfer_settings(scale)`),
    cached by the run's key; computed from its checkpoint the first time only."""

    def compute():
        return encoder_transfer(
            sts.checkpoint_of(run, "SentEval"), pooling, settings, data_dir, batch_size
        )

    return cache.cached_json(
        "transfer_trained", trained_transfer_key(run, pooling, settings, data_dir), compute
    )


def trained_transfer_key(run, pooling, settings, data_dir=None):
    return dict(
        run=run["key"], pooling=pooling, data=cache.data_identity(data_dir, "senteval"), **settings
    )


def transfer_settings(scale):
    """The SentEval protocol settings of a scale, as `evaluate` takes them."""
    return dict(
        kfold=scale["transfer_kfold"],
        inner_search=scale["transfer_inner_search"],
        max_examples=scale["transfer_max_examples"],
        max_eval=scale["transfer_max_eval"],
        classifier=scale["transfer_classifier"],
    )


def transfer_text(scale):
    """A scale's SentEval protocol in words, for a result file's metadata."""
    return (
        f"SentEval max {scale['transfer_max_examples']} train / {scale['transfer_max_eval']} "
        f"dev-test examples, {scale['transfer_kfold']}-fold, inner C search "
        f"{scale['transfer_inner_search']}"
    )
