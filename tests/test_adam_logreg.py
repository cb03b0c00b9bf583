"""The batched SentEval classifier against SentEval's algorithm written out one problem at a time
with torch's own nn.Linear, CrossEntropyLoss and optim.Adam (float64, so that the two agree to
rounding and every early-stopping decision is the same)."""
import copy

import numpy as np
import pytest
import torch

from defsent_lite.evaluation import senteval


def senteval_fit(X, y, train_rows, dev_rows, l2reg, n_classes, s=senteval.AdamSettings(), seed=1111):
    """SentEval's MLP(nhid=0).fit as its tools/classifier.py runs it, in float64."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    model = torch.nn.Linear(X.shape[1], n_classes).double()
    optimizer = torch.optim.Adam(model.parameters(), lr=s.lr, betas=s.betas, eps=s.eps, weight_decay=l2reg)
    loss_fn = torch.nn.CrossEntropyLoss()
    if dev_rows is None:
        permutation = np.random.permutation(len(train_rows))
        cut = int(s.validation_split * len(train_rows))
        train_rows, dev_rows = train_rows[permutation[cut:]], train_rows[permutation[:cut]]
    Xtr, ytr, Xdv, ydv = X[train_rows], y[train_rows], X[dev_rows], y[dev_rows]
    nepoch, best, stop, misses = 0, -1.0, False, 0
    while not stop and nepoch <= s.max_epoch:
        for _ in range(s.epoch_size):
            permutation = np.random.permutation(len(Xtr))
            for i in range(0, len(Xtr), s.batch_size):
                idx = torch.as_tensor(permutation[i:i + s.batch_size])
                loss = loss_fn(model(Xtr[idx]), ytr[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        nepoch += s.epoch_size
        with torch.no_grad():
            accuracy = float((model(Xdv).argmax(1) == ydv).double().mean())
        if accuracy > best:
            best, best_model = accuracy, copy.deepcopy(model)
        else:
            if misses >= s.tenacity:
                stop = True
            misses += 1
    return best_model, best, nepoch


@pytest.fixture(scope="module")
def blobs():
    """Three overlapping Gaussian classes in 12 dimensions (not separable: early stopping matters)."""
    rng = np.random.RandomState(0)
    y = rng.randint(0, 3, 420)
    X = rng.randn(420, 12) + 0.8 * np.eye(3, 12)[y] * 2
    return torch.as_tensor(X), torch.as_tensor(y)


def test_every_problem_follows_senteval_exactly(blobs):
    X, y = blobs
    folds = senteval.stratified_folds(y.numpy(), 5, 1111)
    train = [folds[0][0], folds[1][0], folds[0][0], np.arange(300), np.arange(301)]
    dev = [folds[0][1], folds[1][1], None, None, np.arange(300, 420)]
    regs = [1e-5, 1e-2, 1e-3, 0.0, 1e-4]
    settings = senteval.AdamSettings(max_epoch=40)
    fits = senteval.fit_many_adam(X, y, train, dev, regs, 3, settings)
    for p in range(len(train)):
        model, accuracy, epochs = senteval_fit(X, y, train[p], dev[p], regs[p], 3, settings)
        torch.testing.assert_close(fits.weight[p], model.weight.detach().T, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(fits.bias[p], model.bias.detach(), rtol=1e-9, atol=1e-9)
        assert float(fits.dev_accuracy[p]) == pytest.approx(accuracy, abs=1e-12)
        assert int(fits.epochs[p]) == epochs
    assert len(set(fits.epochs.tolist())) > 1, "the problems should stop at different epochs"


def test_predict_uses_each_problems_best_model(blobs):
    X, y = blobs
    fits = senteval.fit_many_adam(X, y, [np.arange(300)] * 2, [np.arange(300, 420)] * 2, [1e-5, 1e-2], 3,
                                senteval.AdamSettings(max_epoch=8))
    expected = torch.stack([(X @ fits.weight[p] + fits.bias[p]).argmax(1) for p in range(2)])
    assert torch.equal(fits.predict(X), expected)


def test_refuses_non_finite_features_and_empty_dev(blobs):
    X, y = blobs
    bad = X.clone()
    bad[3, 2] = float("nan")
    with pytest.raises(FloatingPointError, match="SentEval classifier features"):
        senteval.fit_many_adam(bad, y, [np.arange(10)], [np.arange(10, 20)], [0.0], 3)
    with pytest.raises(ValueError, match="no training or no dev rows"):
        senteval.fit_many_adam(X, y, [np.arange(10)], [None], [0.0], 3)   # 5% of 10 rows is none


def test_global_random_state_is_left_alone(blobs):
    X, y = blobs
    torch.manual_seed(5)
    np.random.seed(5)
    expected_torch, expected_np = torch.rand(1), np.random.rand()
    torch.manual_seed(5)
    np.random.seed(5)
    senteval.fit_many_adam(X, y, [np.arange(100)], [None], [0.0], 3, senteval.AdamSettings(max_epoch=4))
    assert torch.equal(torch.rand(1), expected_torch) and np.random.rand() == expected_np


# ------------------------------------------------ SentEval's protocols with its torch classifier

def senteval_score(X, y, train, dev, test, l2reg, n_classes):
    model, _, _ = senteval_fit(X, y, train, dev, l2reg, n_classes)
    with torch.no_grad():
        return float((model(X[test]).argmax(1) == y[test]).double().mean())


def senteval_choice(scores_per_reg):
    """SentEval's choice: the first reg of the highest mean accuracy rounded to 2 decimals (in %)."""
    return senteval.L2REGS[int(np.argmax([round(100 * np.mean(s), 2) for s in scores_per_reg]))]


def senteval_inner_kfold(X, y, k, n_classes):
    """tools/validation.py InnerKFoldClassifier with usepytorch (MR, CR, SUBJ, MPQA)."""
    results = []
    for tr, te in senteval.stratified_folds(y.numpy(), k, 1111):
        inner = senteval.stratified_folds(y[tr].numpy(), k, 1111)
        reg = senteval_choice([[senteval_score(X, y, tr[a], tr[b], tr[b], reg, n_classes) for a, b in inner]
                               for reg in senteval.L2REGS])
        results.append(senteval_score(X, y, tr, None, te, reg, n_classes))
    return 100 * np.mean(results)


def senteval_kfold(X, y, train, test, k, n_classes):
    """KFoldClassifier (TREC, MRPC): the reg chosen by k-fold on train, refit with a 5% dev split."""
    folds = senteval.stratified_folds(y[train].numpy(), k, 1111)
    reg = senteval_choice([[senteval_score(X, y, train[a], train[b], train[b], reg, n_classes) for a, b in folds]
                           for reg in senteval.L2REGS])
    return 100 * senteval_score(X, y, train, None, test, reg, n_classes)


def senteval_split(X, y, train, dev, test, n_classes):
    """SplitClassifier (SST-2): the reg chosen on dev, refit (the same seeded fit), scored on test."""
    reg = senteval_choice([[senteval_score(X, y, train, dev, dev, reg, n_classes)] for reg in senteval.L2REGS])
    return 100 * senteval_score(X, y, train, dev, test, reg, n_classes)


@pytest.fixture
def float64_classifier(monkeypatch):
    monkeypatch.setattr(senteval, "TORCH_CLASSIFIER_DTYPE", torch.float64)


def real_task(task, n):
    """Hashed bag-of-words features of the first n sentences of a real task (float64)."""
    from test_transfer_batched import hashed_bag_of_words
    from defsent_lite.data import eval_readers
    if task == "TREC":
        sents, labels = eval_readers.load_trec()["train"]
    else:
        sents, labels = eval_readers.load_binary_task(task)
    idx = np.random.RandomState(0).permutation(len(sents))[:n]
    X = hashed_bag_of_words([sents[i] for i in idx])
    return torch.as_tensor(X), torch.as_tensor(np.array(labels)[idx])


def test_nested_cv_protocol_is_senteval_s(float64_classifier):
    X, y = real_task("MR", 240)
    ours = senteval.nested_cv_accuracy(X.numpy(), y.numpy(), kfold=3, classifier="senteval_torch")
    assert ours == pytest.approx(senteval_inner_kfold(X, y, 3, 2), abs=1e-9)


def test_kfold_and_split_protocols_are_senteval_s(float64_classifier):
    X, y = real_task("TREC", 300)
    train, test = np.arange(220), np.arange(220, 300)
    ours = senteval.cv_then_test_accuracy(X[train].numpy(), y[train].numpy(), X[test].numpy(),
                                                  y[test].numpy(), kfold=3, classifier="senteval_torch")
    assert ours == pytest.approx(senteval_kfold(X, y, train, test, 3, int(y.max()) + 1), abs=1e-9)
    dev = np.arange(180, 220)
    ours = senteval.dev_then_test_accuracy(*(a for rows in (np.arange(180), dev, test)
                                                     for a in (X[rows].numpy(), y[rows].numpy())),
                                                   classifier="senteval_torch")
    assert ours == pytest.approx(senteval_split(X, y, np.arange(180), dev, test, int(y.max()) + 1), abs=1e-9)
