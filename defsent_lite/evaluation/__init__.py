"""Evaluation beside the methods: STS (the papers' "all" setting), SentEval transfer tasks with
the batched solver, NLI metrics (accuracy, AUPRC, direction)."""
