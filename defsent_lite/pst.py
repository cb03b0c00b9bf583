"""DefSent+ Progressive Separate Training pieces: the ICA candidate space.

(The PST loop itself is issue 4's next step.)
"""
import warnings

import numpy as np
from sklearn.decomposition import FastICA


def ica_transform(X, max_iter=1000, seed=42, scale=100.0):
    """FastICA with unit-variance whitening, result x scale (DefSent+'s ICA-transformed space).

    Non-convergence is not hidden: a UserWarning names the iteration count reached.
    """
    X = np.asarray(X, dtype=np.float64)
    ica = FastICA(whiten="unit-variance", max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Y = ica.fit_transform(X)
    if ica.n_iter_ >= max_iter or any("did not converge" in str(w.message) for w in caught):
        warnings.warn(f"FastICA did not converge: stopped at {ica.n_iter_} iterations (max_iter={max_iter})")
    return Y * scale
