"""Fact extraction for Dream: entries in, fact operations out (pure functions, no I/O).

* ``model``: the Structs (``Entry``, ``ExistingFact``, ``FactOp``), ``SECTIONS`` and
  ``apply_ops`` (what applying operations means);
* ``offline.extract(entries, existing)``: the deterministic rule-based extractor, the
  default without a key (helpers: ``text``, ``timeref``, ``voice``, ``signals``,
  ``slots`` (what a fact is about, for corrections), ``pasted`` (who said it inside a
  message), ``notes`` (what a note becomes), ``validity`` (temporary facts));
* ``llm``: the operation protocol for a real model: ``SYSTEM``, ``render_entries``,
  ``render_batches``, ``relevant_facts``, ``parse_ops`` (validation), ``format_ops``;
* ``budget.apply_budget(facts, ...)``: which active facts of one MEMORY.md stay within
  its line and byte budget, and which leave (archived).
"""

from processors.extract.budget import apply_budget
from processors.extract.llm import format_ops, parse_ops, render_entries
from processors.extract.model import SECTIONS, Entry, ExistingFact, FactOp, apply_ops
from processors.extract.offline import extract

__all__ = ["SECTIONS", "Entry", "ExistingFact", "FactOp", "apply_budget", "apply_ops", "extract", "format_ops",
           "parse_ops", "render_entries"]
