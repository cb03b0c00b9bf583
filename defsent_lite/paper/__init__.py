"""The papers' numbers, transcribed (one module per paper), our rows beside them, seed aggregates,
plots and result files."""
