"""Models of the croupier app: the supervisor alerts that card conservation raises
(croupier/conservation.py) and the log of the dealers taking over a table
(croupier/dealers.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from rounds.models import AppendOnly


class CardAlert(models.Model):
    """A reader scan refused because the shoe cannot hold another copy of its card
    (``card_count_exceeded``): kept for the supervisor and the auditors. It names the card by
    its reader sequence number only (the card may have been read face down)."""

    table = models.ForeignKey("tablehub.Table", on_delete=models.PROTECT, related_name="+")
    shoe = models.ForeignKey("tablehub.Shoe", on_delete=models.PROTECT, related_name="alerts")
    round = models.ForeignKey(
        "rounds.Round", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reader_seq = models.PositiveIntegerField(help_text="the refused scan's sequence number")
    code = models.CharField(max_length=32)
    message = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"{self.table} shoe {self.shoe_id} reader card {self.reader_seq}: {self.code}"


class DealerChange(AppendOnly):
    """A tablet user took over the table as its dealer (croupier/dealers.py): who was on
    duty before, who is now, how it was noticed, and whether the shoe was already being
    dealt (``mid_shoe``). Kept for good: the statistics per dealer rest on it."""

    class How(models.TextChoices):
        TABLET_OPENED = "tablet_opened", "a dealer opened the tablet"
        COMMAND = "command", "a dealing command from the tablet"

    table = models.ForeignKey("tablehub.Table", on_delete=models.PROTECT, related_name="+")
    shoe = models.ForeignKey(
        "tablehub.Shoe", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    round = models.ForeignKey(
        "rounds.Round",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the table's round not yet over at the change",
    )
    previous = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the dealer on duty before (empty: nobody)",
    )
    dealer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The usernames as they were: the log keeps them if a user is deleted.
    previous_name = models.CharField(max_length=150, blank=True)
    dealer_name = models.CharField(max_length=150)
    how = models.CharField(max_length=16, choices=How.choices)
    command = models.CharField(max_length=24, blank=True, help_text="the tablet command, if any")
    mid_shoe = models.BooleanField(help_text="cards had already been dealt from the open shoe")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"{self.table} dealer {self.dealer_name} from {self.previous_name or '-'}"
