"""Many logistic regressions on one feature matrix, fitted at once: SentEval's protocols fit
hundreds of small problems per task (every fold x every C or weight decay); here they are one
batched computation, by either of two classifiers.

1. scikit-learn's objective (`fit_many`): problem p minimises it in its mean form

    f_p(w, b) = (1 / n_p) sum_{i in train_p} loss(x_i w + b, y_i) + ||w||^2 / (2 C_p n_p)

(binary: logistic loss, one weight vector; K > 2 classes: softmax cross-entropy, K vectors; the
intercept is not penalised), whose minimum is the same as LogisticRegression(C=C_p)'s. Solver:
truncated Newton (Hessian-vector products, preconditioned conjugate gradients, Armijo
backtracking), batched over problems and run until every problem's largest gradient entry is
below `tol` (scikit-learn's L-BFGS stops at 1e-4). The features are centred and rotated onto
the eigenvectors of their Gram matrix first (the L2 penalty is unchanged by a rotation and the
centring is absorbed by the unpenalised intercept, so the minimum is the same), which makes the
Hessian close to diagonal; its exact diagonal is the preconditioner.

2. SentEval's PyTorch classifier (`fit_many_adam`; nhid=0: one linear layer trained by Adam with
early stopping). SentEval (tools/classifier.py, the papers' setting: Adam lr 1e-3, batch 64, tenacity 5,
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
