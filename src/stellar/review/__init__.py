"""A person reviews a run's verdicts: marks kept as labels, the review order, the precision
the marks estimate, and the local page that takes them (``stellar review``)."""
