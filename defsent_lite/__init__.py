"""defsent_lite: small, notebook-first reproductions of DefSent, DefSent+ and GaussCSE."""

__version__ = "0.3.0"
