"""Evals stage: the golden Q&A set, deterministic scorers, the ablation and the report."""
