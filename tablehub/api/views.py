"""The API's views. Every refusal is a 4xx with ``{"error": {"code", "message"}}``
(tablehub/api/errors.py); who may call what is in tablehub/api/permissions.py."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Model, QuerySet, Sum
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.pagination import PageNumberPagination
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from payouts import dealer_stats, meters
from payouts.models import LedgerEntry
from payouts.reports import report_csv, table_report
from payouts.rtp import main_sheet, special_sheet
from payouts.tasks import run_report
from rounds.engine import EngineError
from rounds.models import Round
from rounds.recall import money, recall, station_rounds
from stations import protection
from stations.models import Station
from tablehub import setup
from tablehub.configuration import save_version
from tablehub.models import Jurisdiction, Report, Table, TableConfig

from . import serializers as s
from .errors import BadRequest, exception_handler
from .permissions import SeesTables, may_see_table, needs

BIGGEST_ID = 2**63 - 1
NO_STORE = {"Cache-Control": "no-store"}  # an answer with a secret: no cache keeps it
SYNC_REPORT_DAYS = 31
ASYNC_REPORT_DAYS = 366
ERRORS = {
    400: OpenApiResponse(s.ErrorSerializer, description="bad input"),
    401: OpenApiResponse(s.ErrorSerializer, description="not logged in"),
    403: OpenApiResponse(s.ErrorSerializer, description="the role may not do this"),
    404: OpenApiResponse(s.ErrorSerializer, description="no such object"),
}


def paged(item: type[serializers.Serializer], name: str, **extra: serializers.Field) -> Any:
    """The OpenAPI shape of one page of ``item`` rows (``Pages``): count, next, previous and
    results (and ``extra`` fields the view adds)."""
    return inline_serializer(
        name,
        fields={
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item(many=True),
            **extra,
        },
    )


class CSVRenderer(BaseRenderer):
    """``?format=csv`` on the report endpoints; the view puts the CSV text in ``csv``."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict) and "csv" in data:
            return data["csv"]
        if isinstance(data, dict) and "error" in data:  # a refusal: one line saying why
            return f"error,{data['error']['code']},{data['error']['message']}\n"
        return str(data)


class Base(APIView):
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer]

    def get_exception_handler(self):
        return exception_handler


_Row = TypeVar("_Row")
_M = TypeVar("_M", bound=Model)


class Pages(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 100

    def page_rows(
        self, queryset: QuerySet[Any, _Row], request: Request, view: APIView
    ) -> list[_Row]:
        """This request's page of ``queryset``. paginate_queryset answers None only when no
        page size is set, and Pages sets one."""
        rows = self.paginate_queryset(queryset, request, view=view)
        assert rows is not None
        return rows


def get_or_404(queryset: QuerySet[_M], pk: int, what: str) -> _M:
    if pk > BIGGEST_ID:
        raise NotFound(f"no {what} {pk}")
    found = queryset.filter(pk=pk).first()
    if found is None:
        raise NotFound(f"no {what} {pk}")
    return found


def whole_number(text: str) -> int | None:
    """``text`` as a whole number of ASCII digits up to BIGGEST_ID, else None (``isdigit``
    alone also accepts digits such as ``³`` that ``int`` refuses, or ``٣`` that it reads)."""
    if not (text.isascii() and text.isdigit()) or int(text) > BIGGEST_ID:
        return None
    return int(text)


def parse_when(value: str | None, name: str) -> datetime:
    if not value:
        raise BadRequest(f"{name} is required: an ISO 8601 date-time such as 2025-01-28T08:00:00Z")
    try:
        when = parse_datetime(value)
    except ValueError:
        when = None
    if when is None:
        raise BadRequest(
            f"{name} must be an ISO 8601 date-time such as 2025-01-28T08:00:00Z, got {value!r}"
        )
    if timezone.is_naive(when):
        when = timezone.make_aware(when, UTC)
    # In UTC: an offset such as -21:55 is valid ISO 8601 but beyond what PostgreSQL stores.
    try:
        return when.astimezone(UTC)
    except OverflowError:
        raise BadRequest(f"{name} is outside the calendar in UTC, got {value!r}") from None


def parse_range(start: str | None, end: str | None, most_days: int) -> tuple[datetime, datetime]:
    begin, finish = parse_when(start, "start"), parse_when(end, "end")
    if begin >= finish:
        raise BadRequest("start must be before end")
    try:
        too_long = finish - begin > timedelta(days=most_days)
    except OverflowError:
        too_long = True
    if too_long:
        raise BadRequest(f"the range may be at most {most_days} days")
    return begin, finish


def table_status(table: Table) -> dict[str, Any]:
    config = table.current_config()
    round = table.rounds.select_related("config").order_by("-pk").first()
    return {
        "id": table.pk,
        "name": table.name,
        "jurisdiction": table.jurisdiction.code,
        "mode": table.mode,
        "currency": table.currency,
        "boxes": table.boxes,
        "is_open": table.is_open,
        "config_version": config.version if config else None,
        "stations": table.stations.filter(is_active=True).count(),
        "round": _round_brief(round) if round else None,
    }


def _round_brief(round: Round) -> dict[str, Any]:
    return {
        "id": round.pk,
        "number": round.number,
        "phase": round.phase,
        "config_version": round.config.version,
        "created_at": round.created_at,
        "settled_at": round.settled_at,
        "deadline": round.deadline,
    }


def _table_for(request, table_id: int) -> Table:
    table = get_or_404(Table.objects.select_related("jurisdiction"), table_id, "table")
    if not may_see_table(request.user, table):
        raise PermissionDenied("you may see only the tables you work")
    return table


def _config_of(table: Table, version: str | None) -> TableConfig:
    if version is None:
        config: TableConfig | None = table.current_config()
        if config is None:
            raise NotFound(f"table {table.pk} has no configuration yet")
        return config
    number = whole_number(version)
    if number is None:
        raise BadRequest(f"version must be a whole number, got {version!r}")
    config = table.configs.filter(version=number).first()
    if config is None:
        raise NotFound(f"table {table.pk} has no configuration version {version}")
    return config


# --- tables -------------------------------------------------------------------------------


class TableList(Base):
    def get_permissions(self):
        if self.request.method == "POST":
            return [needs("tablehub.add_table", "tablehub.add_tableconfig")()]
        return [SeesTables()]

    @extend_schema(responses={200: s.TableStatusSerializer(many=True), **ERRORS})
    def get(self, request):
        """Every table the caller may see (a dealer or supervisor: those they work)."""
        tables = Table.objects.select_related("jurisdiction").order_by("pk")
        if not request.user.has_perm("tablehub.view_table"):
            tables = tables.filter(staff=request.user)
        return Response([table_status(t) for t in tables])

    @extend_schema(
        request=s.TableInputSerializer, responses={201: s.TableStatusSerializer, **ERRORS}
    )
    def post(self, request):
        """Create a table with its first configuration version (floor managers); it is
        closed until opened on the croupier tablet. docs/operations.md, "Setting tables up
        by script"."""
        body = s.TableInputSerializer(data=request.data)
        if not body.is_valid():
            raise BadRequest("the table is not valid", body.errors)
        data = dict(body.validated_data)
        try:
            table = setup.create_table(
                data["name"],
                data["jurisdiction"],
                dict(data["config"]),
                boxes=data["boxes"],
                currency=data["currency"],
                mode=data["mode"],
                shuffler=data["shuffler"],
            )
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        return Response(table_status(table), status=status.HTTP_201_CREATED)


class TableStations(Base):
    permission_classes = [needs("tablehub.view_table", "stations.add_station")]

    @extend_schema(
        request=s.StationsInputSerializer,
        responses={201: s.NewStationSerializer(many=True), **ERRORS},
    )
    def post(self, request, table_id: int):
        """Create stations in bulk (floor managers), each with a generated credential shown
        in this answer only (stored hashed): hand each to its terminal now."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        body = s.StationsInputSerializer(data=request.data)
        if not body.is_valid():
            raise BadRequest("the stations are not valid", body.errors)
        data = body.validated_data
        names = data.get("names") or setup.station_names(data["prefix"], data["count"], table)
        try:
            credentials = setup.create_stations(table, list(names))
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        ids = dict(table.stations.filter(name__in=names).values_list("name", "pk"))
        rows = [{"id": ids[n], "name": n, "credential": c} for n, c in credentials.items()]
        return Response(rows, status=status.HTTP_201_CREATED, headers=NO_STORE)


class TableReaderKey(Base):
    permission_classes = [needs("tablehub.view_table", "tablehub.change_table")]

    @extend_schema(
        request=s.ReaderKeyInputSerializer, responses={200: s.ReaderKeySerializer, **ERRORS}
    )
    def post(self, request, table_id: int):
        """Set the table's card reader key (floor managers): a new random one, shown in this
        answer only, or the ``key`` given; the old key stops working at once."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        body = s.ReaderKeyInputSerializer(data=request.data)
        if not body.is_valid():
            raise BadRequest("the reader key is not valid", body.errors)
        given = body.validated_data.get("key")
        key = setup.set_reader_key(table, given)
        return Response({"reader_key": None if given else key}, headers=NO_STORE)


class TableDetail(Base):
    permission_classes = [SeesTables]

    @extend_schema(responses={200: s.TableStatusSerializer, **ERRORS})
    def get(self, request, table_id: int):
        """A table's status: its mode, configuration version and the round in play."""
        return Response(table_status(_table_for(request, table_id)))


class TableStatus(TableDetail):
    pass


class ConfigList(Base):
    def get_permissions(self):
        if self.request.method == "POST":
            return [needs("tablehub.view_table", "tablehub.add_tableconfig")()]
        return [needs("tablehub.view_tableconfig")()]

    @extend_schema(responses={200: s.ConfigSerializer(many=True), **ERRORS})
    def get(self, request, table_id: int):
        """Every configuration version of a table, newest first."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        configs = table.configs.select_related("created_by").order_by("-version")
        return Response(s.ConfigSerializer(configs, many=True).data)

    @extend_schema(
        request=s.ConfigInputSerializer,
        responses={
            201: s.ConfigSerializer,
            200: OpenApiResponse(s.ConfigSerializer, description="nothing changed"),
            **ERRORS,
        },
    )
    def post(self, request, table_id: int):
        """Save a new configuration version (floor managers); the next round takes it up.
        Refused with 400 and the reasons when the jurisdiction forbids any of it."""
        table = get_or_404(Table.objects.select_related("jurisdiction"), table_id, "table")
        body = s.ConfigInputSerializer(data=request.data)
        if not body.is_valid():
            raise BadRequest("the configuration is not valid", body.errors)
        config, created = save_version(table, dict(body.validated_data), request.user)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(s.ConfigSerializer(config).data, status=code)


class ConfigDetail(Base):
    permission_classes = [needs("tablehub.view_tableconfig")]

    @extend_schema(responses={200: s.ConfigSerializer, **ERRORS})
    def get(self, request, table_id: int, version: int):
        """One configuration version of a table."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        return Response(s.ConfigSerializer(_config_of(table, str(version))).data)


class JurisdictionList(Base):
    permission_classes = [needs("tablehub.view_jurisdiction")]

    @extend_schema(responses={200: s.JurisdictionSerializer(many=True), **ERRORS})
    def get(self, request):
        """What each jurisdiction allows a table to be configured with."""
        items = Jurisdiction.objects.order_by("code")
        return Response(s.JurisdictionSerializer(items, many=True).data)


# --- rounds -------------------------------------------------------------------------------


def _ledger_totals(rounds: list[int], station: Station | None = None) -> dict[int, dict]:
    entries = LedgerEntry.objects.filter(round__in=rounds)
    entries = entries.filter(station=station) if station else entries.exclude(station=None)
    out: dict[int, dict] = {r: {"staked": Decimal(0), "returned": Decimal(0)} for r in rounds}
    for round_id, kind, total in entries.values_list("round", "kind").annotate(t=Sum("amount")):
        if kind == LedgerEntry.Kind.STAKE:
            out[round_id]["staked"] -= total
        else:
            out[round_id]["returned"] += total
    return out


class TableRounds(Base):
    permission_classes = [needs("rounds.view_round")]

    @extend_schema(responses={200: paged(s.StationRoundSerializer, "TableRoundsPage"), **ERRORS})
    def get(self, request, table_id: int):
        """A table's rounds, newest first, with what the stations staked and got back."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        pages = Pages()
        rounds = table.rounds.select_related("config").order_by("-pk")
        page = pages.page_rows(rounds, request, self)
        totals = _ledger_totals([r.pk for r in page])
        return pages.get_paginated_response([_round_row(r, totals[r.pk]) for r in page])


def _round_row(round: Round, totals: dict) -> dict[str, Any]:
    return {
        "id": round.pk,
        "number": round.number,
        "table": round.table_id,
        "phase": round.phase,
        "config_version": round.config.version,
        "created_at": round.created_at,
        "settled_at": round.settled_at,
        "staked": money(totals["staked"]),
        "returned": money(totals["returned"]),
        "net": money(totals["returned"] - totals["staked"]),
    }


class RoundRecall(Base):
    permission_classes = [needs("rounds.view_round")]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, round_id: int):
        """Game recall: the round's whole record (rounds/recall.py)."""
        return Response(recall(get_or_404(Round.objects.all(), round_id, "round")))


# --- stations -----------------------------------------------------------------------------


class StationList(Base):
    permission_classes = [needs("stations.view_station")]

    @extend_schema(
        parameters=[OpenApiParameter("table", int, description="only this table's stations")],
        responses={200: s.StationSerializer(many=True), **ERRORS},
    )
    def get(self, request):
        """The stations, by table and name."""
        stations = Station.objects.order_by("table", "name")
        table = request.query_params.get("table")
        if table is not None:
            table_id = whole_number(table)
            if table_id is None:
                raise BadRequest(f"table must be a table id, got {table!r}")
            stations = stations.filter(table_id=table_id)
        return Response(s.StationSerializer(stations, many=True).data)


class StationRounds(Base):
    permission_classes = [needs("rounds.view_round", "stations.view_station")]

    @extend_schema(responses={200: paged(s.StationRoundSerializer, "StationRoundsPage"), **ERRORS})
    def get(self, request, station_id: int):
        """The rounds a station played, newest first (page_size up to 100), with its stakes,
        returns and net result in each."""
        station = get_or_404(Station.objects.all(), station_id, "station")
        pages = Pages()
        ids: list[int] = pages.page_rows(station_rounds(station), request, self)
        rounds = Round.objects.select_related("config").in_bulk(ids)
        totals = _ledger_totals(list(ids), station)
        rows = [_round_row(rounds[i], totals[i]) for i in ids]
        return pages.get_paginated_response(rows)


class StationLedger(Base):
    permission_classes = [needs("payouts.view_ledgerentry", "stations.view_station")]

    @extend_schema(
        responses={
            200: paged(
                s.LedgerEntrySerializer,
                "StationLedgerPage",
                balance=serializers.DecimalField(max_digits=14, decimal_places=2),
            ),
            **ERRORS,
        }
    )
    def get(self, request, station_id: int):
        """A station's ledger entries, newest first; ``balance`` is its credits now."""
        station = get_or_404(Station.objects.all(), station_id, "station")
        pages = Pages()
        entries = LedgerEntry.objects.filter(station=station).order_by("-pk")
        page = pages.page_rows(entries, request, self)
        response = pages.get_paginated_response(s.LedgerEntrySerializer(page, many=True).data)
        total = entries.aggregate(t=Sum("amount"))["t"] or Decimal(0)
        response.data["balance"] = money(total)
        return response


# --- meters -------------------------------------------------------------------------------


class StationMeters(Base):
    permission_classes = [needs("payouts.view_stationmeter", "stations.view_station")]

    @extend_schema(responses={200: s.StationMetersSerializer, **ERRORS})
    def get(self, request, station_id: int):
        """A station's soft meters, kept with the ledger (docs/integrity.md, "Meters")."""
        station = get_or_404(Station.objects.all(), station_id, "station")
        return Response(s.StationMetersSerializer(meters.of_station(station)).data)


class TableMeters(Base):
    permission_classes = [
        needs("payouts.view_tablemeter", "payouts.view_stationmeter", "tablehub.view_table")
    ]

    @extend_schema(responses={200: s.TableMetersSerializer, **ERRORS})
    def get(self, request, table_id: int):
        """A table's soft meters (the sums of its stations') and each station's, by name
        (docs/integrity.md, "Meters")."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        return Response(s.TableMetersSerializer(meters.of_table(table)).data)


# --- par sheets ---------------------------------------------------------------------------

VERSION = OpenApiParameter(
    "version", str, description="a configuration version (default: the current one)"
)


class ParSheets(Base):
    permission_classes = [needs("tablehub.view_tableconfig")]

    @extend_schema(parameters=[VERSION], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, table_id: int):
        """The par sheet of every special bet a configuration offers (spec/parsheet.md)."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        config = _config_of(table, request.query_params.get("version"))
        rules = config.ruleset()
        sheets = {}
        for code, pays in config.special_bets.items():
            try:
                sheets[code] = special_sheet(code, pays, rules)
            except (EngineError, KeyError) as exc:
                sheets[code] = {"bet": code, "error": str(exc)}
        return Response({"table": table.pk, "version": config.version, "special_bets": sheets})


class MainParSheet(Base):
    permission_classes = [needs("tablehub.view_tableconfig")]

    @extend_schema(parameters=[VERSION], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, table_id: int):
        """The main game's par sheet for a configuration's rules (computed once per rule set,
        some seconds, then kept on disk)."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        config = _config_of(table, request.query_params.get("version"))
        sheet = main_sheet(config.ruleset())
        assert sheet is not None  # None only with compute=False
        return Response({"table": table.pk, "version": config.version, **sheet})


# --- reports ------------------------------------------------------------------------------

FORMAT = OpenApiParameter("format", str, enum=["json", "csv"], description="csv: the lines as CSV")


class TableReport(Base):
    permission_classes = [needs("tablehub.view_reports")]
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("start", OpenApiTypes.DATETIME, required=True),
            OpenApiParameter("end", OpenApiTypes.DATETIME, required=True),
            FORMAT,
        ],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request, table_id: int):
        """A table's report for rounds settled in [start, end) (payouts/reports.py), at most
        31 days; longer ranges: POST /api/tables/{id}/reports/."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        start, end = parse_range(
            request.query_params.get("start"), request.query_params.get("end"), SYNC_REPORT_DAYS
        )
        report = table_report(table, start, end)
        if request.accepted_renderer.format == "csv":
            return _csv_response(report, table, start)
        return Response(report)


class ProtectionReport(Base):
    permission_classes = [needs("tablehub.view_reports")]

    @extend_schema(
        parameters=[
            OpenApiParameter("start", OpenApiTypes.DATETIME, required=True),
            OpenApiParameter("end", OpenApiTypes.DATETIME, required=True),
        ],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request, table_id: int):
        """A table's player-protection events in [start, end) (stations/protection.py), at
        most 31 days: reality checks shown and answered, limits set and reached, breaks,
        inactivity locks, hands completed automatically."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        start, end = parse_range(
            request.query_params.get("start"), request.query_params.get("end"), SYNC_REPORT_DAYS
        )
        return Response(protection.report(table.pk, start, end))


class DealerStatistics(Base):
    permission_classes = [needs("tablehub.view_dealerreport")]

    @extend_schema(
        parameters=[
            OpenApiParameter("start", OpenApiTypes.DATETIME, description="with end"),
            OpenApiParameter("end", OpenApiTypes.DATETIME, description="with start, excluded"),
            OpenApiParameter("shift", str, description="instead of start and end: a shift"),
            OpenApiParameter("date", OpenApiTypes.DATE, description="the shift's day"),
            OpenApiParameter("dealer", str, description="one dealer's username"),
            OpenApiParameter("table", int, description="one table's id"),
        ],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request):
        """Statistics per dealer and table over a shift (``shift`` and ``date``, the shifts of
        TABLEHUB_SHIFTS) or [start, end), at most 31 days (payouts/dealer_stats.py,
        docs/integrity.md): hands, dealer busts and blackjacks, the rank frequencies' chi-square
        and p-value, the hold against the par sheets in standard deviations, outlier flags."""
        params = request.query_params
        shift = params.get("shift")
        if shift:
            day_text = params.get("date")
            try:
                day = date.fromisoformat(day_text) if day_text else timezone.localdate()
            except ValueError:
                message = f"date must be a date such as 2025-01-28, got {day_text!r}"
                raise BadRequest(message) from None
            try:
                start, end = dealer_stats.shift_range(shift, day)
            except dealer_stats.UnknownShift as exc:
                raise BadRequest(str(exc)) from None
        else:
            start, end = parse_range(params.get("start"), params.get("end"), SYNC_REPORT_DAYS)
        dealers = tables = None
        if params.get("dealer"):
            if "\x00" in params["dealer"]:  # PostgreSQL takes no NUL in a text
                raise BadRequest("dealer must be a username")
            users = get_user_model().objects.filter(username=params["dealer"])
            dealers = list(users.values_list("pk", flat=True))
            if not dealers:
                raise NotFound("no such dealer")
        if params.get("table"):
            table_id = whole_number(params["table"])
            if table_id is None:
                raise BadRequest(f"table must be a table's id, got {params['table']!r}")
            tables = [get_or_404(Table.objects.all(), table_id, "table").pk]
        report = dealer_stats.dealer_report(start, end, dealers, tables)
        return Response({"shift": shift or None, **report})


def _csv_response(report: dict, table: Table, start: datetime) -> Response:
    name = f"report-table{table.pk}-{start:%Y%m%dT%H%M}.csv"
    return Response(
        {"csv": report_csv(report)},
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


class ReportJobs(Base):
    permission_classes = [needs("tablehub.view_reports")]

    @extend_schema(
        request=s.ReportRequestSerializer, responses={202: s.ReportJobSerializer, **ERRORS}
    )
    def post(self, request, table_id: int):
        """Ask for a report of up to a year; a Celery task computes it. Poll
        GET /api/reports/{id}/ until its status is done."""
        table = get_or_404(Table.objects.all(), table_id, "table")
        data = request.data if isinstance(request.data, dict) else {}
        start, end = parse_range(
            _text(data.get("start")), _text(data.get("end")), ASYNC_REPORT_DAYS
        )
        report = Report.objects.create(table=table, start=start, end=end, requested_by=request.user)
        transaction.on_commit(lambda: run_report.delay(report.pk))
        return Response(s.ReportJobSerializer(report).data, status=status.HTTP_202_ACCEPTED)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None if value is None else str(value)


class ReportJob(Base):
    permission_classes = [needs("tablehub.view_reports")]
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(parameters=[FORMAT], responses={200: s.ReportJobSerializer, **ERRORS})
    def get(self, request, report_id: int):
        """A requested report: its status, and its result once done (``?format=csv``)."""
        report = get_or_404(Report.objects.select_related("table"), report_id, "report")
        if request.accepted_renderer.format == "csv":
            if report.status != Report.Status.DONE:
                raise BadRequest(f"report {report.pk} is {report.status}", code="not_ready")
            assert report.result is not None  # run_report stores it with the status done
            return _csv_response(report.result, report.table, report.start)
        return Response(s.ReportJobSerializer(report).data)


# --- login --------------------------------------------------------------------------------


class Token(ObtainAuthToken):
    """POST username and password for an API token (send it as ``Authorization: Token …``).
    Logins are throttled like every other login."""

    renderer_classes = [JSONRenderer]

    def get_exception_handler(self):
        return exception_handler

    @extend_schema(
        request=AuthTokenSerializer,
        responses={
            200: inline_serializer("TokenAnswer", fields={"token": serializers.CharField()}),
            400: OpenApiResponse(s.ErrorSerializer, description="a wrong or missing login"),
            429: OpenApiResponse(description="locked out after too many failed logins"),
        },
    )
    def post(self, request, *args, **kwargs):
        if not isinstance(request.data, dict):
            raise BadRequest("send username and password")
        return super().post(request, *args, **kwargs)
