"""Player stations: the terminals at a table, each with its own device credential."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from tablehub.fields import RowsJSONField
from tablehub.tokens import check_token, hash_token


class Station(models.Model):
    """A player terminal. ``table`` is where it plays now; a station of a ``stadium`` may
    move among the stadium's tables between rounds (stations/lobby.py), with its credits."""

    table = models.ForeignKey("tablehub.Table", on_delete=models.CASCADE, related_name="stations")
    stadium = models.ForeignKey(
        "tablehub.Stadium",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="stations",
        help_text="the stadium among whose tables the station may move (its table must be one)",
    )
    name = models.SlugField(max_length=40)
    credential = models.CharField(max_length=128, help_text="hash of the device credential")
    is_active = models.BooleanField(default=True)
    language = models.CharField(
        max_length=8,
        blank=True,
        default="",
        choices=settings.LANGUAGES,
        help_text="the language of this station's page; empty: the player's browser chooses",
    )
    follow_behind = models.BooleanField(
        default=False,
        help_text="seat mode: its bets behind a seat follow the seat's doubles and splits "
        "when its credits cover them",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "name"], name="unique_station_name")
        ]

    def __str__(self) -> str:
        return f"{self.table}/{self.name}"

    def clean(self) -> None:
        if self.stadium_id is not None and self.table_id is not None:
            if self.table.stadium_id != self.stadium_id:
                raise ValidationError(
                    {"stadium": "the station's table must be a table of its stadium"}
                )

    def set_credential(self, secret: str) -> None:
        self.credential = hash_token(secret)

    def check_credential(self, secret: str) -> bool:
        return check_token(secret, self.credential)


class TableSeat(models.Model):
    """Seat mode: the station sitting at one seat (box) of its table, until it leaves. A
    round keeps the seating it closed its bets with (``bets_closed``), so a seat taken or
    left mid-round changes the next round, not this one."""

    table = models.ForeignKey("tablehub.Table", on_delete=models.CASCADE, related_name="seats")
    box = models.PositiveSmallIntegerField()
    station = models.OneToOneField(Station, on_delete=models.CASCADE, related_name="seat")
    taken_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "box"], name="one_station_a_seat")]

    def __str__(self) -> str:
        return f"{self.table} seat {self.box}: {self.station.name}"


class PlayerSession(models.Model):
    """A player's time at a station, from the first cash-in after a cash-out to the next
    cash-out (stations/protection.py); its money is the ledger's, from ``first_entry`` on,
    and the limits the player set for it are here."""

    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="sessions")
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    first_entry = models.BigIntegerField(
        null=True, blank=True, help_text="the ledger entry of the cash-in that opened it"
    )
    loss_limit = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True, help_text="the player's"
    )
    stake_limit = models.DecimalField(
        max_digits=14,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="the player's most staked in one round",
    )
    time_limit_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="the player's"
    )
    next_check_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when the next reality check is due, once one was answered (before: the "
        "jurisdiction's interval after the session's start)",
    )
    check_shown_at = models.DateTimeField(
        null=True, blank=True, help_text="when the open reality check was first shown"
    )
    awake_at = models.DateTimeField(
        null=True, blank=True, help_text="when the player last answered the inactivity question"
    )
    locked_at = models.DateTimeField(
        null=True, blank=True, help_text="when betting was locked for inactivity (credits stay)"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["station"],
                condition=models.Q(closed_at__isnull=True),
                name="one_open_session_per_station",
            )
        ]

    def __str__(self) -> str:
        return f"{self.station} session {self.pk}"


class StationBreak(models.Model):
    """A break the player took at a station (stations/protection.py): the station cashed out
    and refuses cash-ins and bets until ``until``."""

    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="breaks")
    started_at = models.DateTimeField(auto_now_add=True)
    until = models.DateTimeField()
    end_logged = models.BooleanField(default=False)

    class Meta:
        ordering = ["-until"]
        indexes = [models.Index(fields=["station", "until"])]

    def __str__(self) -> str:
        return f"{self.station} break until {self.until:%Y-%m-%d %H:%M}"


class ProtectionEvent(models.Model):
    """A player-protection event at a station (a session opened or closed, a limit set or
    reached), kept for recall, the audit and the floor manager's reports; never changed."""

    class Kind(models.TextChoices):
        SESSION_STARTED = "session_started"
        SESSION_ENDED = "session_ended"
        LIMIT_SET = "limit_set"
        LIMIT_REACHED = "limit_reached"
        REALITY_CHECK_SHOWN = "reality_check_shown"
        REALITY_CHECK_ANSWERED = "reality_check_answered"
        BREAK_STARTED = "break_started"
        BREAK_ENDED = "break_ended"
        INACTIVITY_LOCKED = "inactivity_locked"
        INACTIVITY_ANSWERED = "inactivity_answered"

    station = models.ForeignKey(Station, on_delete=models.PROTECT, related_name="protection")
    session = models.ForeignKey(
        PlayerSession, null=True, blank=True, on_delete=models.PROTECT, related_name="events"
    )
    kind = models.CharField(max_length=24, choices=Kind.choices)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["station", "at"])]

    def __str__(self) -> str:
        return f"{self.station} {self.kind} {self.at:%Y-%m-%d %H:%M:%S}"


class StationCommand(models.Model):
    """A client message already answered: a resent message (same client id) gets the same
    reply again and is not applied twice."""

    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="commands")
    client_id = models.CharField(max_length=64)
    reply = RowsJSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["station", "client_id"], name="unique_client_id")
        ]

    def __str__(self) -> str:
        return f"{self.station} {self.client_id}"


class BetSlip(models.Model):
    """A station's chips on the open round, as groups in the order they were put down
    (one chip, a rebet, a double), so that undo takes back the last group."""

    round = models.ForeignKey("rounds.Round", on_delete=models.CASCADE, related_name="slips")
    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="slips")
    groups = RowsJSONField(
        default=list, help_text='[[{"box": 1, "bet": "main", "amount": "5"}]]'
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "station"], name="one_slip_per_round")
        ]

    def __str__(self) -> str:
        return f"{self.station} slip for {self.round}"
