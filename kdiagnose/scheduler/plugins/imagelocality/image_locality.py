"""ImageLocality: favours nodes that already have the pod's images, scaled by how widely they are spread
(plugins/imagelocality/image_locality.go; image states as backend/cache/cache.go builds them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, SUCCESS, CycleState, Plugin, Status

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot

__all__ = ["ImageIndex", "ImageLocality", "calculate_priority", "image_index", "normalized_image_name"]

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

_CACHE_KEY = "imagelocality/index"


def normalized_image_name(name: str) -> str:
    """Append `:latest` when the name has no tag (a `:` after the last `/`); nothing else is normalized,
    so `nginx` and `docker.io/library/nginx:latest` are different names, as upstream."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageIndex:
    """Per snapshot: image name -> (size, number of nodes listing it), and each node's names.

    The size is the one reported by the first node (in snapshot order) listing the name, as the scheduler
    cache keeps the summary of the first node it saw."""

    __slots__ = ("_holders", "by_node", "states")

    def __init__(self, snapshot: Snapshot) -> None:
        self.states: dict[str, tuple[int, int]] = {}
        self.by_node: dict[str, frozenset[str]] = {}
        self._holders: dict[str, list[str]] | None = None
        for ni in snapshot.node_infos:
            seen: set[str] = set()
            for image_names, size in ni.node.images:
                for n in image_names:
                    if n in seen:
                        continue
                    seen.add(n)
                    st = self.states.get(n)
                    self.states[n] = (size, 1) if st is None else (st[0], st[1] + 1)
            self.by_node[ni.name] = frozenset(seen)

    def holders(self) -> dict[str, list[str]]:
        """Image name -> the nodes listing it (by_node inverted), made on first use."""
        if self._holders is None:
            holders: dict[str, list[str]] = {}
            for node, have in self.by_node.items():
                for n in have:
                    holders.setdefault(n, []).append(node)
            self._holders = holders
        return self._holders


def image_index(snapshot: Snapshot) -> ImageIndex:
    # Node-only data: kept in node_cache, which binding pods (the CI gate) does not clear.
    idx: ImageIndex | None = snapshot.node_cache.get(_CACHE_KEY)
    if idx is None:
        idx = ImageIndex(snapshot)
        snapshot.node_cache[_CACHE_KEY] = idx
    return idx


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(Plugin):
    name = names.IMAGE_LOCALITY

    def score_many(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """`score` per node with the pod's part done once: each image's scaled score (`scaledImageScore`),
        then per node the sum over the images it lists, in the pod's order (repeats count again)."""
        idx = image_index(self.snapshot)
        total_nodes = self.snapshot.num_nodes
        images, count_images = self._images(pod)
        scaled: list[tuple[str, int]] = []
        for image in images:
            name = normalized_image_name(image)
            st = idx.states.get(name)
            if st is not None:
                scaled.append((name, int(float(st[0]) * (float(st[1]) / float(total_nodes)))))
        none = calculate_priority(0, count_images)
        if not scaled:
            return [none] * len(nodes), None
        # Each node's sum from the nodes listing each scored image (a pod's images are on few nodes, or on
        # all of a pool's), then one priority per distinct sum: no Python work for the nodes that list
        # none of them, which score `none` (calculate_priority of 0).
        holders = idx.holders()
        sums: dict[str, int] = {}
        for name, v in scaled:
            for node in holders.get(name, ()):
                sums[node] = sums.get(node, 0) + v
        if not sums:
            return [none] * len(nodes), None
        priority: dict[int | None, int] = {s: calculate_priority(s, count_images) for s in set(sums.values())}
        priority[None] = none
        return list(map(priority.__getitem__, map(sums.get, [ni.name for ni in nodes]))), None

    def _images(self, pod: Pod) -> tuple[list[str], int]:
        """The images scored, and how many count in calculatePriority's threshold."""
        images = pod.images()
        count_images = len(images)
        if self.dialect.image_locality_image_volumes:
            # v1.36 sumImageScores adds the pod's image volumes (volumes[].image.reference); only v1.37
            # counts them in calculatePriority's threshold too (v1.36 over-scored them, #138951).
            volume_images = [
                str(v["image"].get("reference") or "")
                for v in pod.volumes
                if isinstance(v.get("image"), dict)
            ]
            images = images + volume_images
            if self.dialect.image_locality_counts_image_volumes:
                count_images = len(images)
        return images, count_images

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        idx = image_index(self.snapshot)
        total_nodes = self.snapshot.num_nodes
        have = idx.by_node.get(node_info.name, frozenset())
        total = 0
        images, count_images = self._images(pod)
        if have:
            for image in images:
                name = normalized_image_name(image)
                if name in have:
                    size, count = idx.states[name]
                    # scaledImageScore: float64 spread, truncated to int64.
                    total += int(float(size) * (float(count) / float(total_nodes)))
        return calculate_priority(total, count_images), SUCCESS
