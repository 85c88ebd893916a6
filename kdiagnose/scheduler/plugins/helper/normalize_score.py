"""Default score normalization shared by score plugins (mirrors plugins/helper/normalize_score.go)."""

from __future__ import annotations

__all__ = ["default_normalize_score"]


def default_normalize_score(max_priority: int, reverse: bool, scores: dict[str, int]) -> None:
    """Scale `scores` from [0, max(scores)] to [0, max_priority] in place; `reverse` flips them.

    Scores are assumed non-negative. Go's int64 division truncates toward zero, which for these
    non-negative operands equals Python's floor division.
    """
    max_count = 0
    for s in scores.values():
        if s > max_count:
            max_count = s
    if max_count == 0:
        # All zero: upstream leaves them as they are, or gives every node max_priority when reversed.
        if reverse:
            for k in scores:
                scores[k] = max_priority
        return
    for k, s in scores.items():
        v = max_priority * s // max_count
        scores[k] = max_priority - v if reverse else v
