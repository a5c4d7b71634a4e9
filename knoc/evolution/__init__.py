"""Spec evolution (`knoc specs check`): how a spec's schema changed between
two versions, whether each change can break a document, and the proof: a
counterexample the old schema accepts and the new one refuses."""
