"""Issue 17: the batched SentEval classifier minimises scikit-learn's objective (checked against
LogisticRegression converged tightly) and gives scikit-learn's accuracies on real data, scikit-learn
fitting each problem one by one (the reference, here: the package keeps the batched fit only)."""
import warnings

import numpy as np
import pytest
import torch
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression

from defsent_lite import checks
from defsent_lite.data import eval_readers
from defsent_lite.evaluation import senteval


def sklearn_objective(clf, X, y, C):
    """scikit-learn's objective in its mean form at a fitted classifier (hand-written from its docs)."""
    Z = X @ clf.coef_.T + clf.intercept_
    if Z.shape[1] == 1:
        loss = np.logaddexp(0, Z[:, 0]) - y * Z[:, 0]
    else:
        loss = logsumexp(Z, 1) - Z[np.arange(len(y)), y]
    return loss.mean() + (clf.coef_ ** 2).sum() / (2 * C * len(y))


def fit_score(X_train, y_train, X_test, y_test, C, seed):
    """Accuracy (0-1) of scikit-learn's logistic regression with inverse L2 strength C."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LogisticRegression(C=C, max_iter=1000, random_state=seed).fit(X_train, y_train)
    return clf.score(X_test, y_test)


def best_c_by_cv(X, y, grid, kfold, seed):
    """The reference's inner search: the C of `grid` with the highest mean k-fold accuracy."""
    folds = senteval.stratified_folds(y, kfold, seed)
    return grid[int(np.argmax([senteval.selection_score([fit_score(X[tr], y[tr], X[te], y[te], C, seed)
                                                         for tr, te in folds]) for C in grid]))]


def reference_nested_cv(X, y, kfold, seed=1111):
    """SentEval's nested cross-validation written out with one scikit-learn fit at a time."""
    return 100.0 * np.mean([fit_score(X[tr], y[tr], X[te], y[te], best_c_by_cv(X[tr], y[tr], senteval.C_INNER,
                                                                               kfold, seed), seed)
                            for tr, te in senteval.stratified_folds(y, kfold, seed)])


class OneByOne(senteval.Problems):
    """The batched protocols' problems, each fitted alone by scikit-learn's L-BFGS (the reference)."""

    def predict(self, X, y):
        out = np.zeros((len(self.rows), len(y)), int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for p, (rows, C) in enumerate(zip(self.rows, self.regs)):
                out[p] = LogisticRegression(C=C, max_iter=1000, random_state=1111).fit(X[rows], y[rows]).predict(X)
        return out


def synthetic(n, d, classes, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) * rng.gamma(1.0, 1.0, d) + rng.randn(d)   # uneven scales, non-zero mean
    y = (X @ rng.randn(d, classes) * 0.3 + rng.gumbel(size=(n, classes))).argmax(1)
    return X, y


def objective_gradient(coef, intercept, X, y, C):
    """Largest |gradient| entry of the mean-form objective at (coef [K, d], intercept [K]), in numpy."""
    Z = X @ coef.T + intercept
    if Z.shape[1] == 1:
        R = (1 / (1 + np.exp(-Z)) - y[:, None]) / len(y)
    else:
        S = np.exp(Z - logsumexp(Z, 1, keepdims=True))
        R = (S - np.eye(Z.shape[1])[y]) / len(y)
    return max(np.abs(R.T @ X + coef / (C * len(y))).max(), np.abs(R.sum(0)).max())


@pytest.mark.parametrize("classes", [2, 4])
def test_each_problem_reaches_scikit_learns_minimum(classes):
    """The objective is strictly convex: a zero gradient (checked in numpy) is its minimum, and
    scikit-learn, converged as far as it goes, lands on the same weights and predictions."""
    X, y = synthetic(400, 12, classes)
    rng = np.random.RandomState(1)
    masks = rng.rand(3, len(y)) < 0.7
    Cs = [0.25, 1.0, 16.0]
    fits = senteval.fit_many(torch.tensor(X), torch.tensor(y), torch.tensor(masks), Cs, tol=1e-9)
    coef, intercept = fits.coefficients()
    predicted = fits.predict().numpy()
    for p, C in enumerate(Cs):
        Xp, yp = X[masks[p]], y[masks[p]]
        assert objective_gradient(coef[p].numpy(), intercept[p].numpy(), Xp, yp, C) < 1e-8
        ref = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(Xp, yp)
        ref_objective = sklearn_objective(ref, Xp, yp, C)
        assert ref_objective - 1e-10 <= fits.objective[p].item() <= ref_objective + 1e-12
        scale = max(1.0, np.abs(ref.coef_).max(), np.abs(ref.intercept_).max())
        np.testing.assert_allclose(coef[p].numpy(), ref.coef_, atol=1e-3 * scale)
        np.testing.assert_allclose(intercept[p].numpy(), ref.intercept_, atol=1e-3 * scale)
        assert (predicted[p] == ref.predict(X)).all()


def test_float32_on_any_device_stays_within_the_stated_tolerance_of_the_minimum():
    X, y = synthetic(600, 16, 2, seed=3)
    masks = np.ones((1, len(y)), bool)
    ours = senteval.fit_many(torch.tensor(X, dtype=torch.float32), torch.tensor(y), torch.tensor(masks), [4.0], tol=1e-4)
    ref = LogisticRegression(C=4.0, tol=1e-12, max_iter=100_000).fit(X, y)
    assert ours.objective.item() == pytest.approx(sklearn_objective(ref, X, y, 4.0), abs=1e-6)


def test_bad_problems_are_errors_naming_them():
    X, y = synthetic(50, 4, 2)
    X, y = torch.tensor(X), torch.tensor(y)
    with pytest.raises(ValueError, match=r"problems \[1\] have no training rows"):
        senteval.fit_many(X, y, torch.tensor(np.array([[True] * 50, [False] * 50])), [1.0, 1.0])
    one_class = (y == y[0]).unsqueeze(0)
    with pytest.raises(ValueError, match="one class only"):
        senteval.fit_many(X, y, one_class, [1.0])
    with pytest.raises(RuntimeError, match=r"did not converge in 1 Newton steps: problems \[0\]"):
        senteval.fit_many(X, y, torch.ones(1, 50, dtype=torch.bool), [1e6], tol=1e-14, max_newton=1)
    X[3, 2] = float("nan")
    with pytest.raises(checks.NonFinite, match="logistic regression features: 1 of 200 values are NaN"):
        senteval.fit_many(X, y, torch.ones(1, 50, dtype=torch.bool), [1.0])
    with pytest.raises(ValueError, match="unknown SentEval classifier 'svm'"):
        senteval.evaluate_task("MR", lambda s: np.zeros((len(s), 2)), classifier="svm")


def hashed_bag_of_words(sentences):
    """A cheap, deterministic sentence embedding (hashed word counts): the classifiers see real data."""
    return HashingVectorizer(n_features=128, alternate_sign=False, norm="l2").transform(sentences).toarray()


SMALL = dict(kfold=5, inner_search=True, max_examples=1500, max_eval=None)


@pytest.mark.parametrize("task", senteval.TASKS)
def test_batched_protocols_give_scikit_learns_accuracy_on_real_data(task):
    """Every protocol (nested CV, k-fold then test, dev then test) on the task's real sentences,
    at smoke size: the two classifiers agree within 0.3 points or one test example, whichever is
    larger (scikit-learn's L-BFGS stops at a gradient of 1e-4, so a point on the boundary may flip)."""
    # TREC at 800 training examples: scikit-learn's 6-class L-BFGS takes 24.5 s on 1500 here, 1.5 s on 800
    small = dict(SMALL, max_examples=800) if task == "TREC" else SMALL
    ours = senteval.evaluate_task(task, hashed_bag_of_words, **small, classifier="batched")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(senteval, "Problems", OneByOne)
        ref = senteval.evaluate_task(task, hashed_bag_of_words, **small, classifier="batched")
    one_example = {"SST2": 100 / 1821, "TREC": 100 / 500, "MRPC": 100 / 1725}.get(task, 0.0)
    if abs(ours - ref) > max(0.3, one_example) + 1e-9:   # explained only by a fold whose C was a near tie
        assert task in eval_readers.BINARY_FILES and near_tie_in_inner_search(task, small), (task, ours, ref)


def near_tie_in_inner_search(task, small):
    """True when an outer fold's inner search had its best two C within one example of each other
    (mean accuracy over the inner folds): the two solvers may then choose different C."""
    sents, labels = eval_readers.load_binary_task(task)
    idx = senteval.subset(len(sents), small["max_examples"], 1111)
    sents, labels = senteval.senteval_sorted(senteval.pick(sents, idx), senteval.pick(labels, idx))
    X, y = hashed_bag_of_words(sents), np.array(labels)
    for tr, _ in senteval.stratified_folds(y, small["kfold"], 1111):
        inner = senteval.stratified_folds(y[tr], small["kfold"], 1111)
        means = sorted(senteval.selection_score([fit_score(X[tr][a], y[tr][a], X[tr][b], y[tr][b], C, 1111)
                                                 for a, b in inner]) for C in senteval.C_INNER)
        if means[-1] - means[-2] <= 100 / len(tr) + 1e-9:
            return True
    return False


def test_batched_nested_cv_chooses_c_as_the_reference_does(monkeypatch):
    """With one fit per (train rows, C) shared by both paths, the batched protocol picks the same C
    per outer fold and scores the same folds."""
    X, y = synthetic(300, 6, 2, seed=5)
    chosen_ref = []
    monkeypatch.setitem(globals(), "best_c_by_cv", lambda *a, f=best_c_by_cv: chosen_ref.append(f(*a)) or chosen_ref[-1])
    ref = reference_nested_cv(X, y, kfold=4)
    chosen_ours = []
    original_chosen = senteval.chosen
    monkeypatch.setattr(senteval, "chosen", lambda *a: chosen_ours.append(original_chosen(*a)) or chosen_ours[-1])
    ours = senteval.nested_cv_accuracy(X, y, kfold=4, classifier="batched")
    assert chosen_ours == chosen_ref and len(chosen_ref) == 4
    assert ours == pytest.approx(ref, abs=100 / 300)
