"""The papers' protocols around the methods: cached runs, learning-rate searches, seeds, PST
steps, GaussCSE's tables, plans, preflight and the Colab setup."""
