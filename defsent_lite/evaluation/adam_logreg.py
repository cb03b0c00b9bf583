"""SentEval's PyTorch classifier (nhid=0: one linear layer trained by Adam with early stopping),
run for many problems at once.

SentEval (tools/classifier.py, the papers' setting: Adam lr 1e-3, batch 64, tenacity 5,
epoch_size 4, max_epoch 200) fits every problem from a fresh seed: nn.Linear's initial weights
after torch.manual_seed(seed); numpy permutations after np.random.seed(seed), a 5% dev split
first when it is given no dev set, then one permutation per epoch; minibatches of 64 with the
mean cross-entropy; Adam with weight decay l2reg on weight and bias. Every epoch_size epochs it
scores the dev set, keeps the model of the best accuracy (strictly better only) and stops after
tenacity + 1 rounds without improvement, or once past max_epoch. Here each problem follows that
schedule exactly, with its own rows, and all problems take their step together.
"""

from typing import NamedTuple

import numpy as np
import torch

from defsent_lite.checks import require_finite, NonFinite


class Settings(NamedTuple):
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


def fit_many(X, y, train_rows, dev_rows, l2regs, n_classes, settings=Settings(), seed=1111):
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
