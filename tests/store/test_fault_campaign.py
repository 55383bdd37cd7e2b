"""A short fault campaign (``bench/fault_campaign.py``): each fault once, at random moments,
while two writers and two readers run. Nothing acknowledged is lost, nothing refused appears
later, no raw traceback, no hang; reads are served through every fault but the damaged
memory's own (issue 10). The long campaign: ``python bench/fault_campaign.py --rounds 8``.
"""

from __future__ import annotations

from pathlib import Path

from bench import fault_campaign
from bench._faults import mount_error
from tests.conftest import unavailable


def test_a_short_fault_campaign_loses_nothing_and_keeps_reading(tmp_path: Path) -> None:
    why = mount_error()
    if why is not None:
        unavailable(f"the fault campaign needs mounts: {why}")
    report = fault_campaign.campaign(
        tmp_path, rounds=1, seed=5, fault_seconds=1.5, calm_seconds=1.0, hang_seconds=20.0
    )
    assert set(report["faults"]) == set(fault_campaign.FAULTS)
    assert report["writes"]["ack"] > 50
    assert report["acknowledged_lost"] == []
    assert report["refused_applied_later"] == []
    assert report["raw_tracebacks"] == []
    assert report["hangs"] == []
    assert report["unreadable_revisions"] == [] and all(report["git_fsck_clean"].values())
    for fault in ("disk_full", "read_only", "index_damage"):
        reads = report["reads"][fault]
        # The refusals' messages say which read failed and why.
        refused = report["reads_refused_unexpectedly"]
        assert reads["served"] == reads["total"] > 0, (fault, reads, refused)
    damaged = report["reads"]["object_damage"]
    assert damaged.get("others_served", 0) == damaged.get("others_total", 0)
