"""Many L2-regularised logistic regressions on one feature matrix, fitted at once.

SentEval's protocols fit hundreds of small problems per task (every fold x every C); here they
are one batched computation. Problem p minimises scikit-learn's objective in its mean form

    f_p(w, b) = (1 / n_p) sum_{i in train_p} loss(x_i w + b, y_i) + ||w||^2 / (2 C_p n_p)

(binary: logistic loss, one weight vector; K > 2 classes: softmax cross-entropy, K vectors; the
intercept is not penalised), whose minimum is the same as LogisticRegression(C=C_p)'s. Solver:
truncated Newton (Hessian-vector products, preconditioned conjugate gradients, Armijo
backtracking), batched over problems and run until every problem's largest gradient entry is
below `tol` (scikit-learn's L-BFGS stops at 1e-4). The features are centred and rotated onto
the eigenvectors of their Gram matrix first (the L2 penalty is unchanged by a rotation and the
centring is absorbed by the unpenalised intercept, so the minimum is the same), which makes the
Hessian close to diagonal; its exact diagonal is the preconditioner.
"""

from typing import NamedTuple

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
