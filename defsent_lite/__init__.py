"""defsent_lite: small, notebook-first reproductions of DefSent, DefSent+ and GaussCSE.

The methods are the modules here (pooling, encode, train, defsent, defsentplus, gausscse); the
machinery stands beside them, in runtime/, data/, evaluation/, paper/ and repro/.
"""

__version__ = "0.5.0"
